// A trained MiniGpt in one .npz file: see checkpoint.h.
#include "labs/15_mini_gpt/checkpoint.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "labs/15_mini_gpt/code_hash.h"  // kCodeHash, made by the build: not in the kit as a file
#include "labs/15_mini_gpt/npz.h"

namespace mha::checkpoint {
namespace {

// One tensor of a model, seen flat: where its numbers are and its shape.
struct Slot {
  float* data;
  std::vector<std::size_t> shape;
};
template <class T>
Slot slot(T& tensor) {
  return {tensor.data(), {tensor.shape().begin(), tensor.shape().end()}};
}

// Every tensor of a model of `c`'s sizes: its name, its shape, and where it
// lives in a model (found by `in`, so that one list serves saving, checking
// and loading).
struct Tensor {
  std::string name;
  std::vector<std::size_t> shape;
  std::function<Slot(MiniGpt&)> in;
};

std::vector<Tensor> tensors(const Config& c) {
  const auto V = static_cast<std::size_t>(c.vocab), d = static_cast<std::size_t>(c.d_model),
             f = static_cast<std::size_t>(c.d_ff);
  std::vector<Tensor> t = {{"embed", {V, d}, [](MiniGpt& m) { return slot(m.embed); }}};
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blocks." + std::to_string(l) + ".";
    const auto b = static_cast<std::size_t>(l);
    t.push_back({p + "ln1_gamma", {d}, [b](MiniGpt& m) { return slot(m.blocks[b].ln1_gamma); }});
    t.push_back({p + "ln1_beta", {d}, [b](MiniGpt& m) { return slot(m.blocks[b].ln1_beta); }});
    t.push_back({p + "attn.W_Q", {d, d}, [b](MiniGpt& m) { return slot(m.blocks[b].attn.W_Q); }});
    t.push_back({p + "attn.W_K", {d, d}, [b](MiniGpt& m) { return slot(m.blocks[b].attn.W_K); }});
    t.push_back({p + "attn.W_V", {d, d}, [b](MiniGpt& m) { return slot(m.blocks[b].attn.W_V); }});
    t.push_back({p + "attn.W_O", {d, d}, [b](MiniGpt& m) { return slot(m.blocks[b].attn.W_O); }});
    t.push_back({p + "ln2_gamma", {d}, [b](MiniGpt& m) { return slot(m.blocks[b].ln2_gamma); }});
    t.push_back({p + "ln2_beta", {d}, [b](MiniGpt& m) { return slot(m.blocks[b].ln2_beta); }});
    t.push_back({p + "ffn.W_1", {d, f}, [b](MiniGpt& m) { return slot(m.blocks[b].ffn.W_1); }});
    t.push_back({p + "ffn.b_1", {f}, [b](MiniGpt& m) { return slot(m.blocks[b].ffn.b_1); }});
    t.push_back({p + "ffn.W_2", {f, d}, [b](MiniGpt& m) { return slot(m.blocks[b].ffn.W_2); }});
    t.push_back({p + "ffn.b_2", {d}, [b](MiniGpt& m) { return slot(m.blocks[b].ffn.b_2); }});
  }
  t.push_back({"lnf_gamma", {d}, [](MiniGpt& m) { return slot(m.lnf_gamma); }});
  t.push_back({"lnf_beta", {d}, [](MiniGpt& m) { return slot(m.lnf_beta); }});
  return t;
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

Config config_of(const MiniGpt& m) {
  return {m.vocab, m.max_len, m.d_model, m.n_heads, m.d_ff, m.n_layers, m.base};
}

// The model's own tensors, checked against the shapes its sizes give (a
// constructor that built another shape would otherwise be read or written
// past its end).
std::vector<Slot> slots(MiniGpt& m, const std::vector<Tensor>& all, const std::string& who) {
  if (m.blocks.size() != static_cast<std::size_t>(m.n_layers)) {
    throw std::runtime_error(who + ": the model has " + std::to_string(m.blocks.size()) +
                             " blocks, expected n_layers=" + std::to_string(m.n_layers));
  }
  std::vector<Slot> out;
  for (const Tensor& t : all) {
    out.push_back(t.in(m));
    if (out.back().shape != t.shape) {
      throw std::runtime_error(who + ": the model's " + t.name + " has shape " +
                               shape_text(out.back().shape) + ", expected " +
                               shape_text(t.shape));
    }
  }
  return out;
}

}  // namespace

void Save(const std::filesystem::path& path, const MiniGpt& model, std::uint64_t seed,
          const std::vector<std::string>& tokens, const std::string& code_hash) {
  const Config c = config_of(model);
  if (tokens.size() != static_cast<std::size_t>(c.vocab)) {
    throw std::runtime_error("checkpoint: " + std::to_string(tokens.size()) +
                             " tokens for a model of vocab=" + std::to_string(c.vocab));
  }
  const std::vector<Tensor> all = tensors(c);
  // Read only: a Slot's pointer is not const, and nothing is written through it here.
  const std::vector<Slot> from = slots(const_cast<MiniGpt&>(model), all, "checkpoint::Save");
  npz::Archive a;
  for (std::size_t i = 0; i < all.size(); ++i) {
    a.Add(all[i].name, npz::Array::Floats(all[i].shape, from[i].data));
  }
  a.Add("config", npz::Array::Int64s({6}, {c.vocab, c.max_len, c.d_model, c.n_heads, c.d_ff,
                                           c.n_layers}));
  a.Add("base", npz::Array::Float64(c.base));
  a.Add("seed", npz::Array::UInt64(seed));
  a.Add("tokens", npz::Array::Texts(tokens));
  a.Add("code_hash", npz::Array::Text(code_hash));
  a.Write(path);
}

Checkpoint Load(const std::filesystem::path& path) {
  const npz::Archive a = npz::Archive::Read(path);
  const std::string file = path.string();
  auto get = [&](const std::string& name) -> const npz::Array& {
    if (!a.Has(name)) {
      throw std::runtime_error("checkpoint " + file + " has no array \"" + name +
                               "\": not a train_mini_gpt checkpoint?");
    }
    return a.Get(name);
  };
  const std::vector<std::int64_t> sizes = get("config").AsInt64s(file + ": config");
  if (sizes.size() != 6) {
    throw std::runtime_error("checkpoint " + file + ": config has " +
                             std::to_string(sizes.size()) +
                             " numbers, expected 6 (vocab, max_len, d_model, n_heads, d_ff, "
                             "n_layers)");
  }
  for (std::int64_t s : sizes) {
    if (s < 1 || s > 1000000) {
      throw std::runtime_error("checkpoint " + file + ": config holds " + std::to_string(s) +
                               ", expected sizes in [1, 1000000]");
    }
  }
  const Config c{int(sizes[0]), int(sizes[1]), int(sizes[2]), int(sizes[3]), int(sizes[4]),
                 int(sizes[5]), get("base").AsFloat64(file + ": base")};
  // Every tensor checked before anything is built.
  const std::vector<Tensor> all = tensors(c);
  for (const Tensor& t : all) {
    const npz::Array& x = get(t.name);
    if (x.descr != "<f4" || x.shape != t.shape) {
      throw std::runtime_error("checkpoint " + file + ": " + t.name + " is " + x.descr +
                               " of shape " + shape_text(x.shape) + ", expected <f4 of shape " +
                               shape_text(t.shape) + " for config " +
                               shape_text({sizes.begin(), sizes.end()}));
    }
  }
  std::vector<std::string> tokens = get("tokens").AsTexts(file + ": tokens");
  if (tokens.size() != static_cast<std::size_t>(c.vocab)) {
    throw std::runtime_error("checkpoint " + file + ": " + std::to_string(tokens.size()) +
                             " tokens, expected vocab=" + std::to_string(c.vocab));
  }
  const std::uint64_t seed = get("seed").AsUInt64(file + ": seed");
  const std::vector<std::string> hash = get("code_hash").AsTexts(file + ": code_hash");
  // The learner's constructor builds the model (its draws are then replaced).
  MiniGpt model(c.vocab, c.max_len, c.d_model, c.n_heads, c.d_ff, c.n_layers, seed, c.base);
  const std::vector<Slot> to = slots(model, all, "checkpoint " + file);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::vector<float> values = get(all[i].name).AsFloats(file + ": " + all[i].name);
    std::copy(values.begin(), values.end(), to[i].data);
  }
  return Checkpoint{c, seed, std::move(tokens), hash.empty() ? "" : hash[0], std::move(model)};
}

void Expect(const Checkpoint& ck, const Config& want, const std::vector<std::string>& tokens,
            const std::filesystem::path& path) {
  const Config& c = ck.config;
  const std::pair<const char*, std::pair<int, int>> sizes[] = {
      {"vocab", {c.vocab, want.vocab}},       {"max_len", {c.max_len, want.max_len}},
      {"d_model", {c.d_model, want.d_model}}, {"n_heads", {c.n_heads, want.n_heads}},
      {"d_ff", {c.d_ff, want.d_ff}},          {"n_layers", {c.n_layers, want.n_layers}}};
  for (const auto& [name, v] : sizes) {
    if (v.first != v.second) {
      throw std::runtime_error("checkpoint " + path.string() + " has " + name + "=" +
                               std::to_string(v.first) + ", this program's model " + name + "=" +
                               std::to_string(v.second));
    }
  }
  if (c.base != want.base) {
    throw std::runtime_error("checkpoint " + path.string() + " has base=" +
                             std::to_string(c.base) + ", this program's model base=" +
                             std::to_string(want.base));
  }
  for (std::size_t i = 0; i < tokens.size() && i < ck.tokens.size(); ++i) {
    if (ck.tokens[i] != tokens[i]) {
      throw std::runtime_error("checkpoint " + path.string() + ": token " + std::to_string(i) +
                               " is '" + ck.tokens[i] + "', the corpus's '" + tokens[i] +
                               "': a checkpoint of another vocabulary");
    }
  }
}

std::string CodeHash() { return kCodeHash; }

}  // namespace mha::checkpoint
