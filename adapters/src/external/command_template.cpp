// split_command_template and fill_placeholders: shell-like word splitting without a shell.
#include "adapters/command_template.h"

#include <fstream>

namespace reduce {

Expected<std::vector<std::string>> split_command_template(std::string_view text) {
  std::vector<std::string> tokens;
  std::string token;
  bool in_token = false;
  const auto fail = [&](const std::string& what) { return Error{"command template", what + ": " + std::string(text)}; };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_token) tokens.push_back(std::move(token));
      token.clear();
      in_token = false;
      continue;
    }
    in_token = true;
    if (c == '\\') {
      if (++i == text.size()) return fail("trailing backslash");
      token += text[i];
    } else if (c == '\'') {
      const size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) return fail("unterminated single quote");
      token.append(text.substr(i + 1, close - i - 1));
      i = close;
    } else if (c == '"') {
      for (++i;; ++i) {
        if (i >= text.size()) return fail("unterminated double quote");
        if (text[i] == '"') break;
        if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) ++i;
        token += text[i];
      }
    } else {
      token += c;
    }
  }
  if (in_token) tokens.push_back(std::move(token));
  if (tokens.empty()) return fail("empty command");
  return tokens;
}

std::string fill_placeholders(std::string_view text, const Placeholders& placeholders) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '{') {
      const size_t close = text.find('}', i + 1);
      if (close != std::string_view::npos) {
        const auto it = placeholders.find(text.substr(i + 1, close - i - 1));
        if (it != placeholders.end()) {
          out += it->second;
          i = close + 1;
          continue;
        }
      }
    }
    out += text[i++];
  }
  return out;
}

std::vector<std::string> fill_placeholders(const std::vector<std::string>& tokens, const Placeholders& placeholders) {
  std::vector<std::string> out;
  for (const auto& t : tokens) out.push_back(fill_placeholders(t, placeholders));
  return out;
}

Status add_fp32_placeholders(Placeholders& placeholders, const Fp32Nodes& nodes, const Graph& graph,
                             const std::filesystem::path& file) {
  std::string commas, lines;
  for (const auto& name : nodes.present_in(graph)) {
    commas += (commas.empty() ? "" : ",") + name;
    lines += name + "\n";
  }
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << lines;
  out.close();
  if (!out) return Error{file.string(), "cannot write the fp32 node list"};
  placeholders["fp32_nodes"] = commas;
  placeholders["fp32_nodes_file"] = file.string();
  return {};
}

}  // namespace reduce
