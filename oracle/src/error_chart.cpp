// error.svg and error.png with gnuplot: the data in files next to the pictures, a fixed script, no shell.
#include "oracle/error_chart.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
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
  fs::path script, errors, labels, histogram;
  std::vector<fs::path> pictures;  // one per picture, renamed into place when complete
  // Hidden names next to the picture (".error.svg.gp.tmp"): a bundle folder counts them as its own.
  explicit WorkFiles(const std::vector<fs::path>& finals)
      : script(hidden(finals[0], ".gp.tmp")), errors(hidden(finals[0], ".errors.tmp")), labels(hidden(finals[0], ".labels.tmp")),
        histogram(hidden(finals[0], ".hist.tmp")) {
    for (const auto& p : finals) pictures.push_back(hidden(p, ".tmp"));
  }
  static fs::path hidden(const fs::path& picture, const std::string& suffix) {
    return picture.parent_path() / ("." + picture.filename().string() + suffix);
  }
  ~WorkFiles() {
    std::error_code ec;
    for (const auto* p : {&script, &errors, &labels, &histogram}) fs::remove(*p, ec);
    for (const auto& p : pictures) fs::remove(p, ec);
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

// The height a value's label or ring is drawn at: its local error when it has one, else the
// accumulated one; non-finite at the top, none at the floor.
double drawn_height(const ValueError& v, double top) {
  const double score = v.local ? error_score(*v.local) : error_score(v.accumulated);
  return std::isinf(score) ? top : shown(std::isnan(score) ? kFloor : score, top);
}

// Columns: position, accumulated, local, non-finite accumulated, non-finite local, local of a node
// whose input is beyond the engine's range (inherited), kept (ringed). "NaN": nothing (gnuplot
// breaks the line).
std::string errors_data(const ErrorOrigin& origin, double top, const std::set<size_t>& kept) {
  std::ostringstream out;
  auto column = [](bool shown_here, double y) { return shown_here ? number(y) : std::string("NaN"); };
  for (size_t k = 0; k < origin.values.size(); ++k) {
    const ValueError& v = origin.values[k];
    const double acc = error_score(v.accumulated);
    const double loc = v.local ? error_score(*v.local) : NAN;
    const bool fed = v.unfed_input.empty();
    out << k << ' ' << column(std::isfinite(acc), shown(acc, top)) << ' ' << column(fed && std::isfinite(loc), shown(loc, top))
        << ' ' << column(std::isinf(acc), top * 2) << ' ' << column(fed && std::isinf(loc), top) << ' '
        << column(!fed && !std::isnan(loc), shown(loc, top)) << ' '
        << column(kept.count(v.node) > 0, drawn_height(v, top)) << '\n';
  }
  return out.str();
}

// The error plot's area in the smaller picture, in pixels, and the label font's box per character:
// enough to tell whether two labels would overlap.
constexpr double kPlotWidth = 850, kPlotHeight = 300, kCharWidth = 7.2, kLabelHeight = 17, kLabelOffset = 6;

struct LabelBox {
  double x0, x1, y0, y1;
  bool overlaps(const LabelBox& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

struct Labels {
  std::string data;    // position, height, "label", side (0: text right of the point, 1: left of it)
  bool sides[2] = {false, false};
  size_t left_out = 0; // culprits without a label: it would have covered another
};

// The culprits, most telling first (where a non-finite value is born, the sources of the worst
// output, the top local errors), each labelled where its text covers no label placed before it:
// right of its point, else left of it; else it keeps its point and loses its label.
Labels labels_data(const ErrorOrigin& origin, const Graph& graph, double top) {
  std::vector<size_t> order;
  const auto add = [&](size_t k) {
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
  };
  if (origin.nonfinite_born) add(*origin.nonfinite_born);
  for (size_t k : origin.sources) add(k);
  for (size_t k : origin.top_local) add(k);
  const double lo = std::log10(kFloor / 2), hi = std::log10(top * 4);
  const double span = std::max<double>(1, origin.values.size());
  std::vector<LabelBox> placed;
  Labels out;
  std::ostringstream data;
  for (size_t k : order) {
    const ValueError& v = origin.values[k];
    const double y = drawn_height(v, top);
    const std::string text = plain(node_label(graph, v), 48);
    const double px = (k + 0.5) / span * kPlotWidth, py = (std::log10(y) - lo) / (hi - lo) * kPlotHeight;
    const double width = kCharWidth * text.size();
    const LabelBox sides[2] = {{px + kLabelOffset, px + kLabelOffset + width, py + kLabelOffset, py + kLabelOffset + kLabelHeight},
                               {px - kLabelOffset - width, px - kLabelOffset, py + kLabelOffset, py + kLabelOffset + kLabelHeight}};
    int side = -1;
    for (int s = 0; s < 2 && side < 0; ++s) {
      const LabelBox& b = sides[s];
      const bool inside = b.x0 >= 0 && b.x1 <= kPlotWidth;
      if (inside && std::none_of(placed.begin(), placed.end(), [&](const LabelBox& p) { return p.overlaps(b); })) side = s;
    }
    if (side < 0) {
      ++out.left_out;
      continue;
    }
    placed.push_back(sides[side]);
    out.sides[side] = true;
    data << k << ' ' << number(y) << ' ' << data_label(text) << ' ' << side << '\n';
  }
  out.data = data.str();
  return out;
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

// "svg" or "png" from the file's extension, in any case (chart.PNG); "" for any other.
std::string picture_format(const fs::path& picture) {
  std::string ext = picture.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".svg" ? "svg" : ext == ".png" ? "png" : "";
}

// What the script draws besides the data: a line under the title, and which series exist.
struct ChartLayout {
  size_t values = 0;
  double top = 10;
  // Labels right of their point, left of it: a `with labels` plot whose every point is filtered out
  // crashes gnuplot 5.4, so each is drawn only when it has one.
  bool labels_right = false, labels_left = false;
  bool histogram = false, kept = false;
  std::string caption;  // our own words, no quotes
};

// The caption as title lines ("\\n" before each), cut at spaces so that a line fits the picture.
std::string wrapped(const std::string& caption) {
  constexpr size_t kLineChars = 120;
  std::string out, line;
  std::istringstream words(caption);
  for (std::string word; words >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > kLineChars) out += "\\n" + line, line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += "\\n" + line;
  return out;
}

// One picture: the terminal its extension names, then the plots. Fixed text apart from our own
// numbers and words; files and the histogram's title arrive as ARG1..ARG4, the picture as `arg`.
std::string picture_script(const ChartLayout& c, const fs::path& picture, const std::string& arg) {
  std::ostringstream s;
  const int height = c.histogram ? 900 : 520;
  s << "reset\n";
  if (picture_format(picture) == "png")
    s << "set terminal pngcairo size 1000," << height << " noenhanced font 'Sans,10' background '#ffffff'\n";
  else
    s << "set terminal svg size 1000," << height << " dynamic noenhanced font 'Helvetica,12' background '#ffffff'\n";
  s << "set output " << arg << "\n"
    << "set multiplot layout " << (c.histogram ? 2 : 1) << ",1\n"
    << "set title \"Error per value in topological order: local (the node alone on reference inputs) vs accumulated (whole model)"
    << wrapped(c.caption) << "\"\n"
    << "set logscale y\nset format y '%.0e'\nset grid ytics\nset key below maxrows 2 width 2\n"
    << "set xlabel 'value (topological order)'\nset ylabel 'error / tolerance (above 1 fails)'\n"
    << "set xrange [-0.5:" << number(c.values - 0.5) << "]\nset yrange [" << number(kFloor / 2) << ":" << number(c.top * 4) << "]\n"
    << "plot ARG1 using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'accumulated', \\\n"
    << "     ARG1 using 1:3 with points pt 7 ps 0.7 lc rgb '#d62728' title 'local', \\\n"
    << "     ARG1 using 1:4 with points pt 9 ps 1.3 lc rgb '#1f77b4' title 'non-finite (accumulated)', \\\n"
    << "     ARG1 using 1:5 with points pt 5 ps 1.3 lc rgb '#d62728' title 'non-finite (local)', \\\n"
    << "     ARG1 using 1:6 with points pt 4 ps 1.1 lc rgb '#888888' title 'local, input beyond the engine range (inherited)', \\\n";
  if (c.kept) s << "     ARG1 using 1:7 with points pt 6 ps 2.4 lw 2 lc rgb '#2ca02c' title 'kept in FP32', \\\n";
  s << "     1 with lines dt 2 lc rgb '#555555' title 'tolerance'";
  if (c.labels_right) s << ", \\\n     ARG2 using 1:($4 == 0 ? $2 : NaN):3 with labels left offset 0.8,0.8 font ',10' notitle";
  if (c.labels_left) s << ", \\\n     ARG2 using 1:($4 == 1 ? $2 : NaN):3 with labels right offset -0.8,0.8 font ',10' notitle";
  s << "\n";
  if (c.histogram)
    s << "unset logscale y\nset format y '%g'\nset autoscale\nset title ARG4\nset xlabel 'value'\nset ylabel 'count'\n"
      << "set key inside top right\nunset yrange\n"
      << "plot ARG3 using 1:2 with histeps lw 2 lc rgb '#2ca02c' title 'reference', \\\n"
      << "     ARG3 using 1:3 with histeps lw 2 lc rgb '#ff7f0e' title 'engine'\n";
  s << "unset multiplot\nset output\n";
  return s.str();
}

// Why a chart says little: nothing beyond the tolerance when values are read as outputs (the failure
// needs the graph as the engine runs it whole), and the culprits left without a label.
std::string caption(const ErrorOrigin& origin, size_t left_out) {
  bool beyond = false;
  for (const auto& v : origin.values)
    for (double score : {error_score(v.accumulated), v.local ? error_score(*v.local) : 0.0})
      if (!(score <= 1)) beyond = true;
  std::string out;
  if (!beyond)
    out = "No value is beyond the tolerance when read as an output: the failure needs the graph as the engine runs it "
          "whole (e.g. a fused kernel that reading intermediate values splits), so this chart cannot place it";
  if (left_out)
    out += std::string(out.empty() ? "" : "; ") + std::to_string(left_out) + " more culprit" + (left_out == 1 ? "" : "s") +
           " not labelled here, to keep labels apart (the error table lists every culprit)";
  return out;
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

Status check_chart_folder(const fs::path& picture) {
  std::error_code ec;
  if (picture.filename().empty()) return Error{picture.string(), "chart path names no file"};
  if (fs::is_directory(picture, ec)) return Error{picture.string(), "chart path is a folder"};
  const fs::path dir = picture.has_parent_path() ? picture.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return Error{picture.string(), "cannot write the chart: no folder " + dir.string()};
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return Error{picture.string(), "cannot write the chart: folder is not writable"};
  return {};
}

Status check_chart_path(const fs::path& picture) {
  REDUCE_TRY(check_chart_folder(picture));
  if (picture_format(picture).empty())
    return Error{picture.string(), "a chart is drawn as .svg or .png: name the file with one of those extensions"};
  return {};
}

Expected<ChartResult> write_error_chart(const std::vector<fs::path>& pictures, const ErrorOrigin& origin, const Graph& graph,
                                        const std::optional<OutputValues>& output, const std::atomic<bool>* cancel,
                                        const std::vector<size_t>& kept_nodes) {
  if (pictures.empty()) return ChartResult{};
  std::error_code ec;
  for (const auto& p : pictures) {
    REDUCE_TRY(check_chart_path(p));
    fs::remove(p, ec);  // never the picture of an earlier run
  }
  if (origin.values.empty()) return ChartResult{ChartOutcome::GnuplotFailed, "chart: no values to draw"};
  ChartLayout layout;
  layout.values = origin.values.size();
  for (const auto& v : origin.values)
    for (double s : {error_score(v.accumulated), v.local ? error_score(*v.local) : 0.0})
      if (std::isfinite(s)) layout.top = std::max(layout.top, s * 10);
  const std::set<size_t> kept(kept_nodes.begin(), kept_nodes.end());
  const WorkFiles files(pictures);
  const Labels labels = labels_data(origin, graph, layout.top);
  const auto hist = output ? histogram(*output) : std::nullopt;
  layout.labels_right = labels.sides[0];
  layout.labels_left = labels.sides[1];
  layout.histogram = hist.has_value();
  layout.kept = std::any_of(origin.values.begin(), origin.values.end(), [&](const ValueError& v) { return kept.count(v.node); });
  layout.caption = caption(origin, labels.left_out);
  REDUCE_TRY(write_text(files.errors, errors_data(origin, layout.top, kept)));
  REDUCE_TRY(write_text(files.labels, labels.data));
  REDUCE_TRY(write_text(files.histogram, hist ? hist->data : ""));
  std::string script;
  std::vector<std::string> argv = {"gnuplot", "-c", files.script.string(), files.errors.string(), files.labels.string(),
                                   files.histogram.string(), hist ? hist->title : ""};
  for (size_t k = 0; k < pictures.size() && k < 5; ++k) {  // gnuplot passes ARG1..ARG9
    script += picture_script(layout, pictures[k], "ARG" + std::to_string(5 + k));
    argv.push_back(files.pictures[k].string());
  }
  REDUCE_TRY(write_text(files.script, script));
  ProcessOptions options;
  options.timeout_seconds = kChartSeconds;
  options.cancel = cancel;
  options.max_output_bytes = 4096;
  auto result = run_process(argv, options);
  if (!result) return ChartResult{ChartOutcome::NoGnuplot, "chart: gnuplot is not installed (Debian: gnuplot-nox); no chart"};
  for (const auto& p : files.pictures)
    if (!result->exited_ok() || !fs::is_regular_file(p, ec) || fs::file_size(p, ec) == 0)
      return ChartResult{ChartOutcome::GnuplotFailed,
                         "chart: gnuplot " + result->describe(options) + ": " + last_output_lines(result->output, 1)};
  for (size_t k = 0; k < pictures.size() && k < files.pictures.size(); ++k) {
    fs::rename(files.pictures[k], pictures[k], ec);
    if (ec) return Error{pictures[k].string(), "cannot write the chart: " + ec.message()};
  }
  return ChartResult{};
}

}  // namespace reduce
