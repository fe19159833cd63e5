// The remote interface of this lab: what the grader forwards to the learner's
// process (see common/grading/remote.h). Compiled as the client (the header's
// functions as forwarding stubs) and as the server (handlers that call the
// real ones) by lab_remote() in BUILD.
//
// Five calls need a hand-written client and handler, because they change an
// argument or keep a pointer, which the macros do not carry back:
//   cross_entropy    writes *d_logits: the answer carries it;
//   clip_grad_norm   scales the gradients in place: the answer carries them,
//                    shaped as they were sent (remote_layout.h);
//   AdamW::step      changes the model as well as the optimiser: both come
//                    back, after a throw too (the API says nothing changes),
//                    the model shaped as it was sent: the test lays gradients
//                    out over it and runs the double reference on it;
//   GptDecoder       points at *our* model (the learner's process gets a copy
//                    at every call), and so does each of its RotaryDecoders,
//                    at a block's attention: the client sets those pointers
//                    after every call, since they never travel;
//   GptDecoder::cache returns a reference: the client keeps the answer in
//                    its own RotaryDecoder of that block, as lab 11's does.
#include "tests/15_mini_gpt/remote.h"

#include "common/grading/remote_layout.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mha {

MHA_REMOTE_CONSTRUCTOR(MiniGpt,
                       (int vocab, int max_len, int d_model, int n_heads, int d_ff, int n_layers,
                        std::uint64_t seed, double base),
                       (vocab, max_len, d_model, n_heads, d_ff, n_layers, seed, base))
MHA_REMOTE_CONST_METHOD(MiniGpt, Tensor2, logits, (const std::vector<int>& tokens), (tokens))
MHA_REMOTE_CONST_METHOD(MiniGpt, std::vector<Tensor3>, attention_weights,
                        (const std::vector<int>& tokens), (tokens))
MHA_REMOTE_CONST_METHOD(MiniGpt, std::size_t, parameter_count, (), ())
MHA_REMOTE_FUNCTION(GptLossAndGrads, gpt_loss_and_grads,
                    (const MiniGpt& model, const std::vector<int>& inputs,
                     const std::vector<int>& targets),
                    (model, inputs, targets))
MHA_REMOTE_FUNCTION(double, learning_rate_at,
                    (int step, double max_lr, double min_lr, int warmup, int total),
                    (step, max_lr, min_lr, warmup, total))
MHA_REMOTE_CONSTRUCTOR(AdamW, (const MiniGpt& model, AdamWConfig config), (model, config))
MHA_REMOTE_CONST_METHOD(AdamW, int, steps, (), ())
MHA_REMOTE_FUNCTION(int, sample_token,
                    (const Tensor1& logits, const Sampling& sampling, double u),
                    (logits, sampling, u))
MHA_REMOTE_CONST_METHOD(GptDecoder, int, length, (), ())
MHA_REMOTE_FUNCTION(std::vector<int>, generate,
                    (const MiniGpt& model, const std::vector<int>& prompt, int max_new_tokens,
                     const Sampling& sampling, int eos, std::uint64_t seed),
                    (model, prompt, max_new_tokens, sampling, eos, seed))

namespace {

constexpr char kCrossEntropy[] =
    "cross_entropy(const Tensor2& logits, const std::vector<int>& targets, Tensor2* d_logits)";
constexpr char kClip[] = "clip_grad_norm(GptGrads& grads, double max_norm)";
constexpr char kAdamWStep[] = "AdamW::step(MiniGpt& model, const GptGrads& grads, float lr)";
constexpr char kDecoderNew[] = "GptDecoder::GptDecoder(const MiniGpt& model, int capacity)";
constexpr char kDecoderStep[] = "GptDecoder::step(const std::vector<int>& new_tokens)";
constexpr char kDecoderCache[] = "GptDecoder::cache(int block)";

// What cross_entropy and clip_grad_norm answer: the result and what they wrote.
struct CrossEntropyAnswer {
  double loss = 0.0;
  std::optional<Tensor2> d_logits;  // present when the caller passed d_logits
};
struct ClipAnswer {
  double norm = 0.0;
  GptGrads grads;
};

}  // namespace

MHA_REMOTE_STATE(CrossEntropyAnswer, loss, d_logits)
MHA_REMOTE_STATE(ClipAnswer, norm, grads)

#if defined(MHA_REMOTE_CLIENT)

namespace {

// Points the decoder's RotaryDecoders at the attention of the blocks of the
// model it points to (pointers are never sent back: a decoder that comes
// back from the learner's process has none).
void PointAtTheModel(GptDecoder& decoder) {
  auto fields = remote::Access::Fields(decoder);  // model_, attention_, length_
  const MiniGpt* model = std::get<0>(fields);
  std::vector<RotaryDecoder>& attention = std::get<1>(fields);
  if (model == nullptr) return;
  for (std::size_t l = 0; l < attention.size() && l < model->blocks.size(); ++l) {
    std::get<0>(remote::Access::Fields(attention[l])) = &model->blocks[l].attn;
  }
}

}  // namespace

double cross_entropy(const Tensor2& logits, const std::vector<int>& targets, Tensor2* d_logits) {
  CrossEntropyAnswer answer =
      remote::Call<CrossEntropyAnswer>(kCrossEntropy, logits, targets, d_logits != nullptr);
  if (d_logits != nullptr) {
    if (!answer.d_logits) {
      throw remote::LearnerProcessError("the answer to cross_entropy has no d_logits");
    }
    *d_logits = std::move(*answer.d_logits);
  }
  return answer.loss;
}

double clip_grad_norm(GptGrads& grads, double max_norm) {
  ClipAnswer answer = remote::Call<ClipAnswer>(kClip, grads, max_norm);
  remote::RequireLayout(remote::Layout(grads), answer.grads, "clip_grad_norm", "the gradients");
  grads = std::move(answer.grads);
  return answer.norm;
}

void AdamW::step(MiniGpt& model, const GptGrads& grads, float lr) {
  // The optimiser's new state, then the model's, as the learner's step left them.
  const std::vector<std::string> sent = remote::Layout(model);
  auto take_state = [&](remote::Reader& r) {
    remote::CurrentDecodeMode() = remote::DecodeMode::kUpdate;
    AdamW optimiser = *this;
    MiniGpt updated = model;
    remote::Decode(r, optimiser);
    remote::Decode(r, updated);
    if (!r.AtEnd()) throw remote::LearnerProcessError("the answer to AdamW::step has extra bytes");
    remote::RequireLayout(sent, updated, "AdamW::step", "the model");
    *this = std::move(optimiser);
    model = std::move(updated);
  };
  std::string reply;
  try {
    reply = remote::Invoke(kAdamWStep, remote::internal::EncodeArguments(*this, model, grads, lr));
  } catch (const remote::RemoteThrow& thrown) {
    remote::Reader r(thrown.payload);
    remote::Reader probe = r;
    std::string type, message;
    remote::Decode(probe, type);
    remote::Decode(probe, message);
    if (!probe.AtEnd()) take_state(probe);
    remote::ThrowTyped(r, thrown.call);
  }
  remote::Reader r(reply);
  take_state(r);
}

GptDecoder::GptDecoder(const MiniGpt& model, int capacity)
    : GptDecoder(remote::Construct<GptDecoder>(kDecoderNew, model, capacity)) {
  model_ = &model;
  PointAtTheModel(*this);
}

Tensor2 GptDecoder::step(const std::vector<int>& new_tokens) {
  Tensor2 rows;
  try {
    rows = remote::CallMutating<Tensor2>(kDecoderStep, *this, new_tokens);
  } catch (...) {
    PointAtTheModel(*this);  // the state came back after the throw, without pointers
    throw;
  }
  PointAtTheModel(*this);
  return rows;
}

const KVCache& GptDecoder::cache(int block) const {
  KVCache answer = remote::CallConst<KVCache>(kDecoderCache, *this, block);
  if (block >= 0 && static_cast<std::size_t>(block) < attention_.size()) {
    auto fields = remote::Access::Fields(const_cast<RotaryDecoder&>(attention_[block]));
    KVCache& held = std::get<1>(fields);  // layer_, cache_
    held = std::move(answer);
    return held;
  }
  // A block the decoder does not have, answered anyway: kept here.
  static KVCache* elsewhere = new KVCache(remote::Access::Blank<KVCache>());
  *elsewhere = std::move(answer);
  return *elsewhere;
}

#elif defined(MHA_REMOTE_SERVER)

static const bool cross_entropy_registered = remote::Register(
    kCrossEntropy, [](remote::Reader& in, remote::Writer& out) {
      auto [logits, targets, wants_d_logits] =
          remote::internal::DecodeArguments<Tensor2, std::vector<int>, bool>(in);
      CrossEntropyAnswer answer;
      Tensor2 d_logits;
      answer.loss = cross_entropy(logits, targets, wants_d_logits ? &d_logits : nullptr);
      if (wants_d_logits) answer.d_logits = std::move(d_logits);
      remote::Encode(out, answer);
    });

static const bool clip_registered =
    remote::Register(kClip, [](remote::Reader& in, remote::Writer& out) {
      auto [grads, max_norm] = remote::internal::DecodeArguments<GptGrads, double>(in);
      ClipAnswer answer;
      answer.norm = clip_grad_norm(grads, max_norm);
      answer.grads = std::move(grads);
      remote::Encode(out, answer);
    });

static const bool adamw_step_registered =
    remote::Register(kAdamWStep, [](remote::Reader& in, remote::Writer& out) {
      AdamW optimiser = remote::internal::DecodeObject<AdamW>(in);
      auto [model, grads, lr] = remote::internal::DecodeArguments<MiniGpt, GptGrads, float>(in);
      try {
        optimiser.step(model, grads, lr);
      } catch (...) {
        remote::Writer state;
        remote::Encode(state, optimiser);
        remote::Encode(state, model);
        remote::ThrownState() = state.bytes();
        throw;
      }
      remote::Encode(out, optimiser);
      remote::Encode(out, model);
    });

static const bool decoder_constructor_registered = remote::RegisterConstructor<GptDecoder>(
    kDecoderNew, static_cast<void (*)(const MiniGpt&, int)>(nullptr));
static const bool decoder_step_registered =
    remote::RegisterMethod(kDecoderStep, &GptDecoder::step);
static const bool decoder_cache_registered =
    remote::RegisterConstMethod(kDecoderCache, &GptDecoder::cache);

#endif

}  // namespace mha
