// error.svg with gnuplot: the data in files next to the picture, a fixed script, no shell.
#include "oracle/error_chart.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "adapters/process.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

// Scores below this are drawn at it (exact values have error 0, which a log scale cannot show).
constexpr double kFloor = 1e-4;
constexpr size_t kBins = 40;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A name on one line, shortened, without quotes or backslashes (a data-file string can hold it).
std::string plain(const std::string& text, size_t max_length) {
  std::string out;
  for (char c : text.substr(0, max_length)) {
    const auto u = static_cast<unsigned char>(c);
    out += c == '"' ? '\'' : c == '\\' ? '/' : (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  return out;
}

std::string data_label(const std::string& text) { return "\"" + plain(text, 48) + "\""; }

std::string node_label(const Graph& g, const ValueError& v) {
  const Node& n = g.nodes[v.node];
  return (n.name.empty() ? v.value : n.name) + " (" + n.op_type + ")";
}

// The working files of one chart, removed however the drawing ends.
struct WorkFiles {
  fs::path script, errors, labels, histogram, picture;
  // Hidden names next to the picture (".error.svg.gp.tmp"): a bundle folder counts them as its own.
  explicit WorkFiles(const fs::path& svg)
      : script(hidden(svg, ".gp.tmp")), errors(hidden(svg, ".errors.tmp")), labels(hidden(svg, ".labels.tmp")),
        histogram(hidden(svg, ".hist.tmp")), picture(hidden(svg, ".tmp")) {}
  static fs::path hidden(const fs::path& svg, const std::string& suffix) {
    return svg.parent_path() / ("." + svg.filename().string() + suffix);
  }
  ~WorkFiles() {
    std::error_code ec;
    for (const auto* p : {&script, &errors, &labels, &histogram, &picture}) fs::remove(*p, ec);
  }
};

Status write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Error{path.string(), "cannot write"};
  return {};
}

double shown(double score, double ceiling) { return std::clamp(score, kFloor, ceiling); }

// Columns: position, accumulated, local, non-finite accumulated, non-finite local, local of a node
// whose input is beyond the engine's range (inherited). "NaN": nothing (gnuplot breaks the line).
std::string errors_data(const ErrorOrigin& origin, double top) {
  std::ostringstream out;
  auto column = [](bool shown_here, double y) { return shown_here ? number(y) : std::string("NaN"); };
  for (size_t k = 0; k < origin.values.size(); ++k) {
    const ValueError& v = origin.values[k];
    const double acc = error_score(v.accumulated);
    const double loc = v.local ? error_score(*v.local) : NAN;
    const bool fed = v.unfed_input.empty();
    out << k << ' ' << column(std::isfinite(acc), shown(acc, top)) << ' ' << column(fed && std::isfinite(loc), shown(loc, top))
        << ' ' << column(std::isinf(acc), top * 2) << ' ' << column(fed && std::isinf(loc), top) << ' '
        << column(!fed && !std::isnan(loc), shown(loc, top)) << '\n';
  }
  return out.str();
}

// The culprits: where a non-finite value is born, the sources of the worst output, the top local errors.
std::string labels_data(const ErrorOrigin& origin, const Graph& graph, double top) {
  std::set<size_t> chosen(origin.top_local.begin(), origin.top_local.end());
  chosen.insert(origin.sources.begin(), origin.sources.end());
  if (origin.nonfinite_born) chosen.insert(*origin.nonfinite_born);
  std::ostringstream out;
  for (size_t k : chosen) {
    const ValueError& v = origin.values[k];
    const double loc = v.local ? error_score(*v.local) : error_score(v.accumulated);
    out << k << ' ' << number(std::isinf(loc) ? top : shown(loc, top)) << ' ' << data_label(node_label(graph, v)) << '\n';
  }
  return out.str();
}

struct Histogram {
  std::string data;
  std::string title;
};

// Bins over the finite values of both sides; the title counts what a histogram cannot show.
std::optional<Histogram> histogram(const OutputValues& o) {
  if (!dtype_is_float(o.reference.dtype()) || !dtype_is_float(o.engine.dtype())) return std::nullopt;
  double lo = INFINITY, hi = -INFINITY;
  uint64_t nonfinite[2] = {0, 0};
  const Tensor* sides[2] = {&o.reference, &o.engine};
  for (int s = 0; s < 2; ++s)
    for (uint64_t i = 0; i < sides[s]->elements(); ++i) {
      const double x = sides[s]->element_as_double(i);
      if (!std::isfinite(x)) ++nonfinite[s];
      else lo = std::min(lo, x), hi = std::max(hi, x);
    }
  if (!(lo <= hi)) return std::nullopt;
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(lo))) lo -= 0.5, hi += 0.5;
  const double width = (hi - lo) / kBins;
  std::vector<uint64_t> counts[2] = {std::vector<uint64_t>(kBins), std::vector<uint64_t>(kBins)};
  for (int s = 0; s < 2; ++s)
    for (uint64_t i = 0; i < sides[s]->elements(); ++i) {
      const double x = sides[s]->element_as_double(i);
      if (std::isfinite(x)) ++counts[s][std::min<size_t>(kBins - 1, static_cast<size_t>((x - lo) / width))];
    }
  Histogram h;
  std::ostringstream out;
  for (size_t b = 0; b < kBins; ++b) out << number(lo + (b + 0.5) * width) << ' ' << counts[0][b] << ' ' << counts[1][b] << '\n';
  h.data = out.str();
  h.title = "Values of output '" + plain(o.name, 80) + "': reference vs engine (non-finite, not drawn: reference " +
            std::to_string(nonfinite[0]) + ", engine " + std::to_string(nonfinite[1]) + ")";
  return h;
}

// Fixed text apart from our own numbers; files and titles arrive as ARG1..ARG5.
std::string script(size_t values, double top, bool labels, bool with_histogram) {
  std::ostringstream s;
  s << "set terminal svg size 1000," << (with_histogram ? 900 : 520) << " dynamic noenhanced font 'Helvetica,12' background '#ffffff'\n"
    << "set output ARG1\n"
    << "set multiplot layout " << (with_histogram ? 2 : 1) << ",1\n"
    << "set title 'Error per value in topological order: local (the node alone on reference inputs) vs accumulated (whole model)'\n"
    << "set logscale y\nset format y '%.0e'\nset grid ytics\nset key below maxrows 2 width 2\n"
    << "set xlabel 'value (topological order)'\nset ylabel 'error / tolerance (above 1 fails)'\n"
    << "set xrange [-0.5:" << number(values - 0.5) << "]\nset yrange [" << number(kFloor / 2) << ":" << number(top * 4) << "]\n"
    << "plot ARG2 using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'accumulated', \\\n"
    << "     ARG2 using 1:3 with points pt 7 ps 0.7 lc rgb '#d62728' title 'local', \\\n"
    << "     ARG2 using 1:4 with points pt 9 ps 1.3 lc rgb '#1f77b4' title 'non-finite (accumulated)', \\\n"
    << "     ARG2 using 1:5 with points pt 5 ps 1.3 lc rgb '#d62728' title 'non-finite (local)', \\\n"
    << "     ARG2 using 1:6 with points pt 4 ps 1.1 lc rgb '#888888' title 'local, input beyond the engine range (inherited)', \\\n"
    << "     1 with lines dt 2 lc rgb '#555555' title 'tolerance'" << (labels ? ", \\\n" : "\n");
  if (labels) s << "     ARG3 using 1:2:3 with labels left rotate by 20 offset 0.8,0.8 font ',10' notitle\n";
  if (with_histogram)
    s << "unset logscale y\nset format y '%g'\nset autoscale\nset title ARG5\nset xlabel 'value'\nset ylabel 'count'\n"
      << "set key inside top right\nunset yrange\n"
      << "plot ARG4 using 1:2 with histeps lw 2 lc rgb '#2ca02c' title 'reference', \\\n"
      << "     ARG4 using 1:3 with histeps lw 2 lc rgb '#ff7f0e' title 'engine'\n";
  s << "unset multiplot\n";
  return s.str();
}

}  // namespace

std::optional<OutputValues> histogram_output(const Oracle& oracle, const ErrorOrigin& origin, const TensorMap& actual) {
  std::string name;
  if (origin.worst_output) name = origin.values[*origin.worst_output].value;
  else if (!oracle.model().graph.outputs.empty()) name = oracle.model().graph.outputs.front().name;
  const Tensor* reference = oracle.recorded().find(name);
  auto engine = actual.find(name);
  if (!reference || engine == actual.end()) return std::nullopt;
  return OutputValues{name, *reference, engine->second};
}

Status check_chart_path(const fs::path& svg) {
  std::error_code ec;
  if (svg.filename().empty()) return Error{svg.string(), "chart path names no file"};
  if (fs::is_directory(svg, ec)) return Error{svg.string(), "chart path is a folder"};
  const fs::path dir = svg.has_parent_path() ? svg.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return Error{svg.string(), "cannot write the chart: no folder " + dir.string()};
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return Error{svg.string(), "cannot write the chart: folder is not writable"};
  return {};
}

Expected<ChartResult> write_error_chart(const fs::path& svg, const ErrorOrigin& origin, const Graph& graph,
                                        const std::optional<OutputValues>& output, const std::atomic<bool>* cancel) {
  REDUCE_TRY(check_chart_path(svg));
  std::error_code ec;
  fs::remove(svg, ec);  // never the picture of an earlier run
  if (origin.values.empty()) return ChartResult{ChartOutcome::GnuplotFailed, "chart: no values to draw"};
  double top = 10;
  for (const auto& v : origin.values)
    for (double s : {error_score(v.accumulated), v.local ? error_score(*v.local) : 0.0})
      if (std::isfinite(s)) top = std::max(top, s * 10);
  const WorkFiles files(svg);
  const std::string labels = labels_data(origin, graph, top);
  const auto hist = output ? histogram(*output) : std::nullopt;
  REDUCE_TRY(write_text(files.errors, errors_data(origin, top)));
  REDUCE_TRY(write_text(files.labels, labels));
  REDUCE_TRY(write_text(files.histogram, hist ? hist->data : ""));
  REDUCE_TRY(write_text(files.script, script(origin.values.size(), top, !labels.empty(), hist.has_value())));
  ProcessOptions options;
  options.timeout_seconds = kChartSeconds;
  options.cancel = cancel;
  options.max_output_bytes = 4096;
  auto result = run_process({"gnuplot", "-c", files.script.string(), files.picture.string(), files.errors.string(),
                             files.labels.string(), files.histogram.string(), hist ? hist->title : ""},
                            options);
  if (!result) return ChartResult{ChartOutcome::NoGnuplot, "chart: gnuplot is not installed (Debian: gnuplot-nox); no chart"};
  if (!result->exited_ok() || !fs::is_regular_file(files.picture, ec))
    return ChartResult{ChartOutcome::GnuplotFailed,
                       "chart: gnuplot " + result->describe(options) + ": " + last_output_lines(result->output, 1)};
  fs::rename(files.picture, svg, ec);
  if (ec) return Error{svg.string(), "cannot write the chart: " + ec.message()};
  return ChartResult{};
}

}  // namespace reduce
