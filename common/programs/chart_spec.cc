#include "common/programs/chart_spec.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

#include "common/programs/lab_program.h"

namespace mha {

Json::Json() = default;
Json::Json(double number) : kind_(Kind::kNumber), number_(number) {}
Json::Json(bool value) : kind_(Kind::kBool), bool_(value) {}
Json::Json(const char* text) : kind_(Kind::kString), text_(text) {}
Json::Json(std::string text) : kind_(Kind::kString), text_(std::move(text)) {}

Json::Json(const std::vector<double>& numbers) : kind_(Kind::kArray) {
  for (double v : numbers) items_.emplace_back(v);
}

Json::Json(const std::vector<float>& numbers) : kind_(Kind::kArray) {
  for (float v : numbers) items_.emplace_back(static_cast<double>(v));
}

Json::Json(const std::vector<std::string>& texts) : kind_(Kind::kArray) {
  for (const std::string& t : texts) items_.emplace_back(t);
}

Json Json::Array() {
  Json j;
  j.kind_ = Kind::kArray;
  return j;
}

Json Json::Object() {
  Json j;
  j.kind_ = Kind::kObject;
  return j;
}

Json& Json::Set(const std::string& key, Json value) {
  if (kind_ != Kind::kObject) throw std::logic_error("Json::Set(\"" + key + "\") on a non-object");
  members_[key] = std::move(value);
  return *this;
}

Json& Json::Add(Json value) {
  if (kind_ != Kind::kArray) throw std::logic_error("Json::Add on a non-array");
  items_.push_back(std::move(value));
  return *this;
}

namespace {

void DumpString(const std::string& s, std::string& out) {
  out += '"';
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

}  // namespace

void Json::DumpTo(std::string& out) const {
  switch (kind_) {
    case Kind::kNull:
      out += "null";
      return;
    case Kind::kBool:
      out += bool_ ? "true" : "false";
      return;
    case Kind::kNumber: {
      if (!std::isfinite(number_)) {
        out += "null";
        return;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", number_);
      out += buf;
      return;
    }
    case Kind::kString:
      DumpString(text_, out);
      return;
    case Kind::kArray: {
      out += '[';
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i > 0) out += ',';
        items_[i].DumpTo(out);
      }
      out += ']';
      return;
    }
    case Kind::kObject: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : members_) {
        if (!first) out += ",\n";  // one member a line: readable, and diffable
        first = false;
        DumpString(key, out);
        out += ':';
        value.DumpTo(out);
      }
      out += '}';
      return;
    }
  }
}

std::string Json::Dump() const {
  std::string out;
  DumpTo(out);
  return out;
}

namespace {

// A chart's first members: its kind and its titles.
Json Chart(const char* kind, const std::string& title, const std::string& subtitle) {
  return Json::Object().Set("kind", kind).Set("title", title).Set("subtitle", subtitle);
}

}  // namespace

Json LinesChart(const std::string& title, const std::string& subtitle, const std::string& x_label,
                const std::string& y_label, const std::vector<Series>& series) {
  Json all = Json::Array();
  for (const Series& s : series) {
    std::vector<double> x = s.x;
    if (x.empty()) {
      for (std::size_t i = 0; i < s.y.size(); ++i) x.push_back(static_cast<double>(i));
    }
    Json one = Json::Object().Set("label", s.label).Set("x", x).Set("y", s.y);
    if (s.style != "line") one.Set("style", s.style);
    all.Add(std::move(one));
  }
  return Chart("lines", title, subtitle)
      .Set("x_label", x_label)
      .Set("y_label", y_label)
      .Set("series", std::move(all));
}

Json BarsChart(const std::string& title, const std::string& subtitle, const std::string& x_label,
               const std::vector<BarGroup>& groups) {
  Json all = Json::Array();
  for (const BarGroup& g : groups) {
    Json bars = Json::Array();
    for (const Bar& b : g.bars) {
      bars.Add(Json::Object().Set("label", b.label).Set("value", b.value).Set("note", b.note));
    }
    all.Add(Json::Object().Set("title", g.title).Set("bars", std::move(bars)));
  }
  return Chart("bars", title, subtitle).Set("x_label", x_label).Set("groups", std::move(all));
}

Json HeatmapPanel(const std::string& title, const float* values, std::size_t rows,
                  std::size_t cols) {
  Json matrix = Json::Array();
  for (std::size_t i = 0; i < rows; ++i) {
    matrix.Add(std::vector<float>(values + i * cols, values + (i + 1) * cols));
  }
  return Json::Object().Set("title", title).Set("values", std::move(matrix));
}

Json HeatmapsChart(const std::string& title, const std::string& subtitle, int columns,
                   Json panels) {
  return Chart("heatmaps", title, subtitle).Set("columns", columns).Set("panels", std::move(panels));
}

void WriteChart(const Json& spec, const std::filesystem::path& path) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  out << spec.Dump() << "\n";
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

namespace {

constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kScript = "tools/plot/draw_chart.py";

// Runs python3 SCRIPT SPECS... and returns its exit status (-1 if it could
// not start or was killed).
int RunScript(const std::filesystem::path& script,
              const std::vector<std::filesystem::path>& specs) {
  std::vector<std::string> args = {kPython, script.string()};
  for (const auto& s : specs) args.push_back(s.string());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execv(kPython, argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace

bool DrawCharts(const std::vector<std::filesystem::path>& specs) {
  if (specs.empty()) return true;
  const std::filesystem::path script = WorkspaceRoot() / kScript;
  std::error_code ec;
  const bool runnable = std::filesystem::exists(script, ec) && access(kPython, X_OK) == 0;
  if (runnable) {
    const int status = RunScript(script, specs);
    if (status == 0) return true;
    if (status == 2) return false;  // matplotlib is missing: the script said how to install it
  }
  std::string command = std::string(kPython) + " " + kScript;
  for (const auto& s : specs) command += " " + s.string();
  std::cout << "to draw the chart" << (specs.size() == 1 ? "" : "s")
            << " as PNG, run from the repository (needs Debian's python3-matplotlib:\n"
               "sudo apt-get install python3-matplotlib, or tools/setup.sh):\n  "
            << command << "\n";
  return false;
}

void WriteAndDrawCharts(const std::vector<std::filesystem::path>& data,
                        const std::vector<std::pair<std::filesystem::path, Json>>& charts) {
  std::vector<std::filesystem::path> written = data, specs;
  for (const auto& [path, spec] : charts) {
    WriteChart(spec, path);
    written.push_back(path);
    specs.push_back(path);
  }
  PrintWritten(written);
  DrawCharts(specs);
}

}  // namespace mha
