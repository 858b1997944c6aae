// Activation functions of the recurrent operators (RNN, GRU, LSTM), named by their `activations` attribute.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "reference/kernel.h"

namespace reduce::ref {

struct RnnActivation {
  enum class Kind { Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus };
  Kind kind = Kind::Tanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (kind) {
      case Kind::Relu: return x > 0 ? x : 0;
      case Kind::Tanh: return std::tanh(x);
      case Kind::Sigmoid: return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
      case Kind::Affine: return alpha * x + beta;
      case Kind::LeakyRelu: return x >= 0 ? x : alpha * x;
      case Kind::ThresholdedRelu: return x > alpha ? x : 0;
      case Kind::ScaledTanh: return alpha * std::tanh(beta * x);
      case Kind::HardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
      case Kind::Elu: return x >= 0 ? x : alpha * (std::exp(x) - 1);
      case Kind::Softsign: return x / (1 + std::fabs(x));
      case Kind::Softplus: return x > 30 ? x : std::log1p(std::exp(x));
    }
    return x;
  }
};

// The activations of every direction: `per_direction` names each (default `defaults`), alphas and betas
// consumed in order by the functions that take them, the operator's defaults when the lists run out.
inline Expected<std::vector<RnnActivation>> read_rnn_activations(const Node& node, const std::vector<std::string>& defaults,
                                                                  size_t directions) {
  std::vector<std::string> names;
  if (const Attribute* a = node.attribute("activations"); a && !a->strings.empty()) names = a->strings;
  else
    for (size_t d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() == defaults.size() && directions == 2) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != defaults.size() * directions)
    return make_error("activations needs " + std::to_string(defaults.size() * directions) + " names, got " + std::to_string(names.size()));
  std::vector<float> alphas, betas;
  if (const Attribute* a = node.attribute("activation_alpha")) alphas = a->floats;
  if (const Attribute* a = node.attribute("activation_beta")) betas = a->floats;
  size_t ai = 0, bi = 0;
  auto alpha = [&](double fallback) { return ai < alphas.size() ? static_cast<double>(alphas[ai++]) : fallback; };
  auto beta = [&](double fallback) { return bi < betas.size() ? static_cast<double>(betas[bi++]) : fallback; };
  std::vector<RnnActivation> out;
  using K = RnnActivation::Kind;
  for (const std::string& original : names) {
    std::string n = original;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    RnnActivation f;
    if (n == "relu") f.kind = K::Relu;
    else if (n == "tanh") f.kind = K::Tanh;
    else if (n == "sigmoid") f.kind = K::Sigmoid;
    else if (n == "affine") { f.kind = K::Affine; f.alpha = alpha(1.0); f.beta = beta(0.0); }
    else if (n == "leakyrelu") { f.kind = K::LeakyRelu; f.alpha = alpha(0.01); }
    else if (n == "thresholdedrelu") { f.kind = K::ThresholdedRelu; f.alpha = alpha(1.0); }
    else if (n == "scaledtanh") { f.kind = K::ScaledTanh; f.alpha = alpha(1.0); f.beta = beta(1.0); }
    else if (n == "hardsigmoid") { f.kind = K::HardSigmoid; f.alpha = alpha(0.2); f.beta = beta(0.5); }
    else if (n == "elu") { f.kind = K::Elu; f.alpha = alpha(1.0); }
    else if (n == "softsign") f.kind = K::Softsign;
    else if (n == "softplus") f.kind = K::Softplus;
    else return make_error("unknown activation '" + original + "'");
    out.push_back(f);
  }
  return out;
}

}  // namespace reduce::ref
