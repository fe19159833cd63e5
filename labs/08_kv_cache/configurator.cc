#include "labs/08_kv_cache/configurator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>

#include "common/programs/attention_sizes.h"
#include "common/programs/lab_program.h"

namespace mha {
namespace configure {
namespace {

constexpr std::int64_t kDefaultDHead = 128;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::int64_t parse_count(const std::string& flag, const std::string& text) {
  const std::string bad = "--" + flag + "=" + text + " is not a positive whole number";
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 15) {
    throw std::invalid_argument(bad);
  }
  const std::int64_t v = std::stoll(text);
  if (v <= 0) throw std::invalid_argument(bad);
  return v;
}

std::int64_t parse_count_or_zero(const std::string& flag, const std::string& text) {
  if (text == "0") return 0;
  try {
    return parse_count(flag, text);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("--" + flag + "=" + text + " is not a whole number >= 0");
  }
}

double parse_gib(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v > 0) || !std::isfinite(v)) {
    throw std::invalid_argument("--" + flag + "=" + text + " is not a positive number of GiB");
  }
  return v;
}

// "1,048,576"
std::string with_commas(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", value);
  std::string digits = buf, out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// `value` in the largest of `units` (each `base` times the one before) that
// keeps it under 1000 of them, with three significant digits: "268 M",
// "21.5 GiB". Below the second unit, a whole number.
std::string format_scaled(double value, double base, const std::vector<const char*>& units) {
  std::size_t u = 0;
  while (value >= base - 0.5 && u + 1 < units.size()) {
    value /= base;
    ++u;
  }
  char buf[32];
  const char* format = u == 0 || value >= 99.95 ? "%.0f%s" : value >= 9.995 ? "%.1f%s" : "%.2f%s";
  std::snprintf(buf, sizeof buf, format, value, units[u]);
  return buf;
}

// "268 M", "21.5 G": parameters.
std::string format_count(double n) {
  return format_scaled(n, 1000.0, {"", " k", " M", " G", " T"});
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

std::string kv_column(const Variant& v, const Options& o) {
  if (v.family == "MLA") {
    return std::to_string(v.kv_rank) + (o.rope_dim > 0 ? "+" + std::to_string(o.rope_dim) : "");
  }
  return std::to_string(v.kv_heads);
}

std::string describe(const Variant& v, const Options& o) {
  if (v.family == "MHA") return "MHA (" + std::to_string(v.kv_heads) + " kv heads, one per query head)";
  if (v.family == "MQA") return "MQA (one kv head for all " + std::to_string(o.n_heads) + " query heads)";
  if (v.family == "GQA") {
    return "GQA with " + std::to_string(v.kv_heads) + " kv heads (groups of " +
           std::to_string(o.n_heads / v.kv_heads) + " query heads)";
  }
  return "MLA with a " + std::to_string(v.kv_rank) + "-wide latent" +
         (o.rope_dim > 0 ? " plus a " + std::to_string(o.rope_dim) + "-wide RoPE key" : "");
}

// Breaks each line of `text` at spaces so that no line is longer than `width`.
std::string wrap(const std::string& text, std::size_t width) {
  std::ostringstream out;
  std::stringstream lines(text);
  std::string line;
  bool first_line = true;
  while (std::getline(lines, line)) {
    if (!first_line) out << "\n";
    first_line = false;
    std::stringstream words(line);
    std::string word;
    std::size_t used = 0;
    while (words >> word) {
      if (used > 0 && used + 1 + word.size() > width) {
        out << "\n";
        used = 0;
      }
      if (used > 0) {
        out << ' ';
        ++used;
      }
      out << word;
      used += word.size();
    }
  }
  return out.str();
}

std::string tokens_phrase(const Options& o) {
  return std::to_string(o.batch) + " x " + with_commas(static_cast<double>(o.context)) + " tokens";
}

}  // namespace

bool wants_help(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& a) { return a == "--help" || a == "-h"; });
}

std::string usage() {
  return "usage: configure --d_model N --n_layers N --context N --memory_gb X [flags]\n"
         "  --d_model N      model width (required)\n"
         "  --n_layers N     attention layers (required)\n"
         "  --context N      tokens of context per sequence (required)\n"
         "  --memory_gb X    memory for the KV cache, GiB (required)\n"
         "  --n_heads N      query heads (default d_model / 128)\n"
         "  --batch N        sequences decoded together (default 1)\n"
         "  --dtype T        bf16, fp16 or fp32 (default bf16)\n"
         "  --mla_ranks A,B  MLA latent widths (default 2, 4, 8 x d_head)\n"
         "  --rope_dim N     decoupled RoPE key cached beside the MLA latent (default 64;\n"
         "                   0 is lab 6's MLA)\n";
}

Options parse_flags(const std::vector<std::string>& args) {
  // pass 1: flag -> value, accepting --flag=value and --flag value
  // (common/programs/lab_program.h reads them and names a missing value).
  std::map<std::string, std::string> given;
  Flags flags(args, usage());
  while (flags.Next()) {
    const std::string value = flags.String();
    const std::string name = flags.name().substr(2);
    static const char* known[] = {"d_model", "n_heads", "n_layers", "context", "batch",
                                  "memory_gb", "dtype", "mla_ranks", "rope_dim"};
    if (std::find(std::begin(known), std::end(known), name) == std::end(known)) flags.Unknown();
    if (given.count(name)) throw std::invalid_argument(flags.name() + " given twice");
    given[name] = value;
  }
  for (const char* required : {"d_model", "n_layers", "context", "memory_gb"}) {
    if (!given.count(required)) {
      throw std::invalid_argument(std::string("--") + required + " is required");
    }
  }

  // pass 2: each value, checked.
  Options o;
  o.d_model = parse_count("d_model", given["d_model"]);
  o.n_layers = parse_count("n_layers", given["n_layers"]);
  o.context = parse_count("context", given["context"]);
  o.memory_gib = parse_gib("memory_gb", given["memory_gb"]);
  if (given.count("batch")) o.batch = parse_count("batch", given["batch"]);
  if (given.count("n_heads")) {
    o.n_heads = parse_count("n_heads", given["n_heads"]);
    if (o.d_model % o.n_heads != 0) {
      throw std::invalid_argument("--n_heads=" + given["n_heads"] + " does not divide --d_model=" +
                                  given["d_model"]);
    }
  } else {
    if (o.d_model % kDefaultDHead != 0) {
      throw std::invalid_argument("--d_model=" + given["d_model"] +
                                  " is not a multiple of 128, the default d_head: give --n_heads");
    }
    o.n_heads = o.d_model / kDefaultDHead;
  }
  if (given.count("dtype")) {
    const std::string& t = given["dtype"];
    if (t == "bf16" || t == "fp16") {
      o.bytes_per_value = 2;
    } else if (t == "fp32") {
      o.bytes_per_value = 4;
    } else {
      throw std::invalid_argument("--dtype=" + t + ": expected bf16, fp16 or fp32");
    }
    o.dtype = t;
  }
  if (given.count("rope_dim")) o.rope_dim = parse_count_or_zero("rope_dim", given["rope_dim"]);
  const std::int64_t d_head = o.d_model / o.n_heads;
  if (given.count("mla_ranks")) {
    std::stringstream list(given["mla_ranks"]);
    std::string item;
    while (std::getline(list, item, ',')) o.mla_ranks.push_back(parse_count("mla_ranks", item));
    if (o.mla_ranks.empty()) throw std::invalid_argument("--mla_ranks= lists no rank");
  } else {
    o.mla_ranks = {2 * d_head, 4 * d_head, 8 * d_head};
  }
  std::sort(o.mla_ranks.rbegin(), o.mla_ranks.rend());
  o.mla_ranks.erase(std::unique(o.mla_ranks.begin(), o.mla_ranks.end()), o.mla_ranks.end());
  return o;
}

std::vector<Variant> size_variants(const Options& o) {
  const double positions = static_cast<double>(o.context) * static_cast<double>(o.batch);
  const double budget = o.memory_gib * kGiB;
  std::vector<Variant> out;
  auto finish = [&](Variant v) {
    v.cache_bytes_per_token = v.cache_floats_per_token_per_layer * o.n_layers * o.bytes_per_value;
    v.cache_bytes_total = static_cast<double>(v.cache_bytes_per_token) * positions;
    v.fits = v.cache_bytes_total <= budget;
    out.push_back(v);
  };
  // Every kv-head count that splits the query heads into equal groups, most first.
  for (std::int64_t g = o.n_heads; g >= 1; --g) {
    if (o.n_heads % g != 0) continue;
    Variant v;
    v.family = g == o.n_heads ? "MHA" : g == 1 ? "MQA" : "GQA";
    v.name = v.family == "GQA" ? "GQA-" + std::to_string(g) : v.family;
    v.kv_heads = g;
    v.params_per_layer = sizes::gqa_parameters(o.d_model, o.n_heads, g);
    v.cache_floats_per_token_per_layer = sizes::gqa_cache_floats_per_token(o.d_model, o.n_heads, g);
    finish(v);
  }
  for (std::int64_t r : o.mla_ranks) {
    Variant v;
    v.family = "MLA";
    v.name = "MLA-" + std::to_string(r);
    v.kv_rank = r;
    v.params_per_layer = sizes::mla_parameters(o.d_model, o.n_heads, r, o.rope_dim);
    v.cache_floats_per_token_per_layer = sizes::mla_cache_floats_per_token(r, o.rope_dim);
    finish(v);
  }
  return out;
}

Recommendation recommend(const Options& o, const std::vector<Variant>& variants) {
  Recommendation rec;
  // The largest cache that fits; at equal size the first listed (grouped
  // heads come before latents).
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (!variants[i].fits) continue;
    if (rec.index < 0 ||
        variants[i].cache_bytes_per_token > variants[rec.index].cache_bytes_per_token) {
      rec.index = static_cast<int>(i);
    }
  }
  const double budget = o.memory_gib * kGiB;
  std::ostringstream why;
  if (rec.index >= 0) {
    const Variant& best = variants[rec.index];
    const Variant& mha = variants.front();
    why << "Recommended: " << describe(best, o) << ".\n"
        << "Of the variants whose cache fits in " << format_bytes(budget) << ", it keeps the most "
        << "key/value capacity per token: " << format_bytes(best.cache_bytes_total) << " for "
        << tokens_phrase(o) << ".";
    // The next larger cache, and why it is out.
    const Variant* next = nullptr;
    for (const Variant& v : variants) {
      if (!v.fits && v.cache_bytes_per_token > best.cache_bytes_per_token &&
          (next == nullptr || v.cache_bytes_per_token < next->cache_bytes_per_token)) {
        next = &v;
      }
    }
    if (next != nullptr) {
      why << " The next larger, " << next->name << ", would need "
          << format_bytes(next->cache_bytes_total) << ".";
    }
    if (&best != &mha) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.3g",
                    static_cast<double>(mha.cache_bytes_per_token) / best.cache_bytes_per_token);
      why << " Its cache is " << ratio << "x smaller than MHA's ("
          << format_bytes(mha.cache_bytes_total) << ").";
    }
    rec.reason = why.str();
    return rec;
  }
  // Nothing fits: the smallest cache, and what the budget would hold with it.
  const Variant* smallest = &variants.front();
  for (const Variant& v : variants) {
    if (v.cache_bytes_per_token < smallest->cache_bytes_per_token) smallest = &v;
  }
  const double per_sequence = static_cast<double>(smallest->cache_bytes_per_token) * o.context;
  const double tokens = budget / smallest->cache_bytes_per_token;
  why << "Nothing fits in " << format_bytes(budget) << ": the smallest cache, "
      << describe(*smallest, o) << ", needs " << format_bytes(smallest->cache_bytes_total)
      << " for " << tokens_phrase(o) << ".";
  if (per_sequence <= budget) {
    why << " With it the budget holds a batch of "
        << with_commas(std::floor(budget / per_sequence)) << " at this context.";
  } else {
    why << " With it the budget holds " << with_commas(std::floor(tokens))
        << " cached tokens in all: less than one sequence of this context.";
  }
  why << " Other ways out: more memory (shard the cache across devices), a shorter context, a smaller "
         "dtype, or fewer layers.";
  rec.reason = why.str();
  return rec;
}

std::string format_bytes(double bytes) {
  return format_scaled(bytes, 1024.0, {" B", " KiB", " MiB", " GiB", " TiB", " PiB"});
}

std::string report(const Options& o) {
  const std::vector<Variant> variants = size_variants(o);
  const Recommendation rec = recommend(o, variants);
  std::ostringstream out;
  out << "Attention for d_model=" << o.d_model << ", " << o.n_heads << " query heads of d_head="
      << o.d_model / o.n_heads << ", " << o.n_layers << " layers, " << o.dtype << " ("
      << o.bytes_per_value << " bytes per value)\n"
      << "KV cache for " << tokens_phrase(o) << " = "
      << with_commas(static_cast<double>(o.batch) * static_cast<double>(o.context))
      << " cached positions per layer; budget " << format_bytes(o.memory_gib * kGiB) << "\n";
  if (o.rope_dim > 0) {
    out << "MLA caches a kv_rank latent plus a " << o.rope_dim
        << "-wide decoupled RoPE key per token and layer\n";
  }
  out << "\n";
  const std::vector<std::string> head = {"variant", "kv heads/rank", "params/layer",
                                         "params (all layers)", "cache/token/layer",
                                         "cache/token", "whole cache", "fits"};
  std::vector<std::vector<std::string>> rows = {head};
  for (const Variant& v : variants) {
    rows.push_back({v.name, kv_column(v, o), with_commas(static_cast<double>(v.params_per_layer)),
                    format_count(static_cast<double>(v.params_per_layer) * o.n_layers),
                    format_bytes(static_cast<double>(v.cache_floats_per_token_per_layer) *
                                 o.bytes_per_value),
                    format_bytes(static_cast<double>(v.cache_bytes_per_token)),
                    format_bytes(v.cache_bytes_total), v.fits ? "yes" : "no"});
  }
  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& r : rows) {
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      line += (c ? "  " : "") + pad(rows[i][c], width[c], /*right=*/c > 0 && c < 7 && i > 0);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << "\n" << wrap(rec.reason, 78) << "\n";
  return out.str();
}

}  // namespace configure
}  // namespace mha
