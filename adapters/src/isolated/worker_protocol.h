// The line protocol between isolated engines and their worker: tab-separated, escaped fields.
//
//   load <TAB> spec <TAB> threads <TAB> model.onnx                       -> ok | error <TAB> message
//   run  <TAB> spec <TAB> threads <TAB> model.onnx <TAB> inputs-dir <TAB> outputs-dir [<TAB> value]...
//                                                                         -> ok | error <TAB> message
//   cancel                                 (sent during a run) -> no reply of its own: the run ends
//                                          early (external commands are killed) and replies as usual
// `run` writes output_K.pb (named) for each requested value, K in request order. A worker whose
// socket is shut down during a run cancels it the same way, then exits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace reduce::worker_protocol {

inline std::string escape(std::string_view field) {
  std::string out;
  for (char c : field) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

inline std::string encode(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) line += '\t';
    line += escape(fields[i]);
  }
  return line + "\n";
}

// Splits a line (without its newline) into unescaped fields.
inline std::vector<std::string> decode(std::string_view line) {
  std::vector<std::string> fields(1);
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\t') {
      fields.emplace_back();
    } else if (c == '\\' && i + 1 < line.size()) {
      const char n = line[++i];
      fields.back() += n == 't' ? '\t' : n == 'n' ? '\n' : n;
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace reduce::worker_protocol
