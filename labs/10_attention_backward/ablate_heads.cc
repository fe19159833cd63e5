// ablate_heads: how much does each head of a trained model matter?
//
//   bazel run -c opt //labs/10_attention_backward:ablate_heads
//   bazel run -c opt //labs/10_attention_backward:ablate_heads -- --copy-heads 4
//   bazel run -c opt //labs/10_attention_backward:ablate_heads -- --quick
//
// As in Michel, Levy and Neubig, "Are Sixteen Heads Really Better than
// One?" (NeurIPS 2019), each head is silenced in turn (its output
// multiplied by 0, here by zeroing its rows of W_O, see
// attention_only_model.h) and the model is evaluated again; the increase
// of the loss is how much the model relied on that head. Two models:
//
//   * the toy agreement model of lab 7 (4 heads, d_model 32), trained by
//     labs/07_head_analysis/train_toy_model.py, read from labs/07_head_analysis/trained/
//     and evaluated on fresh sentences of its grammar;
//   * the copy-task model of heads_sweep (8 heads by default, d_model 64),
//     trained here first with heads_sweep's settings and seed 0 (the same
//     numbers as heads_sweep's seed-0 run with that many heads; --seed).
//
// It prints a table per model and writes the loss increases as a CSV and a
// chart of bars, out/ablate_heads/ablation.csv and ablation.json (drawn as
// ablation.png by tools/plot/draw_chart.py), and view.json: the toy model's
// heads on one sentence with each head's loss increase, for the head viewer
// of the course reader (./lab read). Evaluation uses your
// lab 3 forward; training the copy model uses your lab 10 backward too.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/programs/chart_spec.h"
#include "common/programs/lab_program.h"
#include "labs/07_head_analysis/trained_model.h"
#include "labs/10_attention_backward/copy_task.h"
#include "labs/10_attention_backward/token_model.h"

namespace {

using mha::training::AttentionOnlyModel;
using mha::training::Evaluation;
using mha::training::Example;

const mha::LabProgram kProgram = {
    "ablate_heads", "your labs 1-3 and 10",
    "bazel run -c opt --config=solutions //labs/10_attention_backward:ablate_heads"};  // in the instructors' repository

struct Options {
  std::string out;              // empty: out/ablate_heads in the repository
  std::string trained;          // empty: labs/07_head_analysis/trained in the repository
  int copy_heads = 8;
  mha::training::CopyTaskConfig copy;  // heads_sweep's defaults
  int toy_sentences = 2000;
  bool toy = true, copy_model = true;
};

mha::FlagSet flags_of(Options& o) {
  mha::FlagSet f(kProgram.name);
  f.Int("--copy-heads", &o.copy_heads, 1, 64,
        "heads of the copy-task model (default 8; must divide 64)")
      .Seed("--seed", &o.copy.seed, "seed of the copy-task model (default 0)")
      .Int("--steps", &o.copy.steps, 2, 1000000,
           "training steps of the copy-task model (default 1500, as heads_sweep)")
      .Switch("--toy-only", [&o] { o.copy_model = false; }, "only the lab 7 toy model")
      .Switch("--copy-only", [&o] { o.toy = false; }, "only the copy-task model")
      .Text("--trained", &o.trained, "DIR",
            "the toy model's directory (default labs/07_head_analysis/trained)")
      .Out(&o.out)
      .Switch("--quick", [&o] {
        o.toy_sentences = 200;
        o.copy.steps = 30;
        o.copy.batch = 8;
        o.copy.eval_examples = 50;
      }, "a small run for tests: 200 toy sentences, the copy model trained\nfor 30 steps of 8");
  return f;
}

void check(Options& o) {
  if (o.copy.d_model % o.copy_heads != 0) {
    throw std::invalid_argument("--copy-heads " + std::to_string(o.copy_heads) +
                                " does not divide d_model = " + std::to_string(o.copy.d_model));
  }
  if (!o.toy && !o.copy_model) {
    throw std::invalid_argument("--toy-only and --copy-only exclude each other");
  }
}

// ----------------------------------------------------------------- the lab 7 toy model

struct ToyModel {
  std::vector<std::string> vocab;
  AttentionOnlyModel model;
};

// What labs/07_head_analysis/train_toy_model.py writes: x = embed[ids] + pos, y = x +
// MultiHeadAttention(x, causal) with 4 heads, logits = y @ unembed: exactly
// AttentionOnlyModel, so the files go straight into one.
ToyModel load_toy_model(const std::filesystem::path& dir) {
  mha::TrainedModel m = mha::load_trained_model(dir, /*with_unembed=*/true);
  ToyModel t{m.vocab, AttentionOnlyModel(static_cast<int>(m.vocab.size()),
                                         static_cast<int>(m.pos.shape(0)), mha::kTrainedDModel,
                                         mha::kTrainedHeads, 0)};
  t.model.embed = std::move(m.embed);
  t.model.pos = std::move(m.pos);
  t.model.layer.W_Q = std::move(m.W_Q);
  t.model.layer.W_K = std::move(m.W_K);
  t.model.layer.W_V = std::move(m.W_V);
  t.model.layer.W_O = std::move(m.W_O);
  t.model.unembed = std::move(m.unembed);
  return t;
}

// The toy grammar of labs/07_head_analysis/train_toy_model.py: 2 to 5 clauses
// PRONOUN [ADVERB] VERB joined by ",", pronouns without repetition, an
// adverb half the time, one verb stem per sentence, -s after he/she.
const std::vector<std::string> kPronouns = {"I", "you", "he", "she", "we", "they"};
const std::vector<std::string> kStems = {"work", "play", "read"};
const std::vector<std::string> kAdverbs = {"often", "never", "also"};

std::vector<std::string> toy_sentence(std::mt19937_64& gen) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(gen() % n); };
  const std::string& stem = kStems[pick(kStems.size())];
  const std::size_t clauses = 2 + pick(4);
  std::vector<std::string> pronouns = kPronouns;
  for (std::size_t i = 0; i < clauses; ++i) std::swap(pronouns[i], pronouns[i + pick(6 - i)]);
  std::vector<std::string> words;
  for (std::size_t c = 0; c < clauses; ++c) {
    if (c > 0) words.push_back(",");
    const std::string& p = pronouns[c];
    words.push_back(p);
    if (gen() % 2 == 0) words.push_back(kAdverbs[pick(kAdverbs.size())]);
    words.push_back(p == "he" || p == "she" ? stem + "s" : stem);
  }
  return words;
}

int index_of(const std::vector<std::string>& vocab, const std::string& word) {
  const auto it = std::find(vocab.begin(), vocab.end(), word);
  if (it == vocab.end()) throw mha::TrainedModelError("the toy vocabulary has no \"" + word + "\"");
  return static_cast<int>(it - vocab.begin());
}

// Next-token prediction on each sentence: inputs ids[0..n-2], targets ids[1..n-1].
std::vector<Example> toy_examples(const std::vector<std::string>& vocab, int count,
                                  std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<Example> out;
  for (int i = 0; i < count; ++i) {
    std::vector<int> ids;
    for (const std::string& w : toy_sentence(gen)) ids.push_back(index_of(vocab, w));
    out.push_back({{ids.begin(), ids.end() - 1}, {ids.begin() + 1, ids.end()}});
  }
  return out;
}

// What the toy model is for: the verb's form after an adverb (agreement
// across a token, which only attention can see), and the verb's stem from
// the second clause on (copied from an earlier verb).
struct ToyScores {
  Evaluation eval;
  double agreement_after_adverb = 0.0;  // right form of the right stem preferred
  double stem_copied = 0.0;             // verb predicted exactly, clause 2 onwards
};

ToyScores score_toy(const AttentionOnlyModel& model, const std::vector<std::string>& vocab,
                    const std::vector<Example>& examples) {
  std::vector<mha::Tensor2> all_logits;  // one forward per sentence, read twice below
  for (const Example& ex : examples) all_logits.push_back(model.logits(ex.inputs));  // (T, V)
  ToyScores s;
  s.eval = mha::training::evaluate_logits(all_logits, examples);
  const int comma = index_of(vocab, ",");
  std::size_t agree_n = 0, agree_ok = 0, copy_n = 0, copy_ok = 0;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const Example& ex = examples[i];
    const mha::Tensor2& logits = all_logits[i];  // (T, V)
    bool after_comma = false;
    for (std::size_t t = 0; t < ex.inputs.size(); ++t) {
      const std::string& in = vocab[ex.inputs[t]];
      after_comma = after_comma || ex.inputs[t] == comma;
      const std::string& target = vocab[ex.targets[t]];
      std::string stem = target;
      if (!stem.empty() && stem.back() == 's') stem.pop_back();
      if (std::find(kStems.begin(), kStems.end(), stem) == kStems.end()) continue;  // not a verb
      const float* row = &logits(t, 0);
      const bool third = target != stem;
      if (std::find(kAdverbs.begin(), kAdverbs.end(), in) != kAdverbs.end()) {
        const bool prefers_third = row[index_of(vocab, stem + "s")] > row[index_of(vocab, stem)];
        ++agree_n;
        if (prefers_third == third) ++agree_ok;
      }
      if (after_comma) {
        const std::size_t best = std::max_element(row, row + logits.shape(1)) - row;
        ++copy_n;
        if (static_cast<int>(best) == ex.targets[t]) ++copy_ok;
      }
    }
  }
  s.agreement_after_adverb = agree_n ? double(agree_ok) / agree_n : 0.0;
  s.stem_copied = copy_n ? double(copy_ok) / copy_n : 0.0;
  return s;
}

// ----------------------------------------------------------------- reports

AttentionOnlyModel without_all_heads(const AttentionOnlyModel& m) {
  AttentionOnlyModel out = m;
  out.layer.W_O.fill(0.0f);
  return out;
}

// The opposite experiment: every head but h silenced.
AttentionOnlyModel only_head(const AttentionOnlyModel& m, int h) {
  AttentionOnlyModel out = m;
  for (int other = 0; other < m.layer.n_heads; ++other) {
    if (other != h) out = mha::training::without_head(out, other);
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The toy model's heads on one sentence of its grammar, each with the loss
// increase when it is silenced: the data of the course reader's head viewer.
mha::Json toy_view(const ToyModel& toy, const std::vector<double>& increase, double base_loss) {
  const std::vector<std::string> tokens = {"I", "work", ",", "you", "often", "work", ",",
                                           "he", "often", "works"};
  std::vector<int> ids;
  for (const std::string& w : tokens) ids.push_back(index_of(toy.vocab, w));
  const mha::Tensor2 x = mha::training::embed_sequence(toy.model.embed, toy.model.pos, ids);
  const mha::Tensor3 w = toy.model.layer.attend(x, mha::training::causal(ids.size())).weights;
  mha::Json heads = mha::Json::Array();
  for (std::size_t h = 0; h < increase.size(); ++h) {
    mha::Json rows = mha::Json::Array();  // (T, T)
    for (std::size_t i = 0; i < ids.size(); ++i) {
      rows.Add(std::vector<double>(&w(h, i, 0), &w(h, i, 0) + ids.size()));
    }
    heads.Add(mha::Json::Object().Set("weights", std::move(rows)).Set("loss_increase", increase[h]));
  }
  return mha::Json::Object()
      .Set("kind", "heads_view")
      .Set("program", "ablate_heads")
      .Set("title", "lab 7 toy model: loss " + fixed(base_loss, 4) +
                        " nats with every head; the increase when one head is silenced")
      .Set("tokens", tokens)
      .Set("layers", mha::Json::Array().Add(
                         mha::Json::Object().Set("name", "layer 1").Set("heads", std::move(heads))));
}

mha::BarGroup ablate_toy(const Options& o, std::ofstream& csv, mha::Json* view) {
  const auto dir = o.trained.empty() ? mha::WorkspaceRoot() / "labs/07_head_analysis/trained"
                                     : std::filesystem::path(o.trained);
  const ToyModel toy = load_toy_model(dir);
  const std::vector<Example> examples = toy_examples(toy.vocab, o.toy_sentences, /*seed=*/1);
  const int H = toy.model.layer.n_heads;
  std::printf("lab 7 toy model (%s): d_model=32, %d heads, %d fresh sentences\n",
              dir.string().c_str(), H, o.toy_sentences);
  std::printf("%-17s %9s %10s %12s %13s\n", "silenced", "loss", "increase", "agreement",
              "stem copied");
  const ToyScores base = score_toy(toy.model, toy.vocab, examples);
  auto row = [&](const std::string& name, const ToyScores& s) {
    std::printf("%-17s %9.4f %+10.4f %12.3f %13.3f\n", name.c_str(), s.eval.loss,
                s.eval.loss - base.eval.loss, s.agreement_after_adverb, s.stem_copied);
    csv << "toy," << name << "," << s.eval.loss << "," << s.eval.loss - base.eval.loss << ","
        << s.agreement_after_adverb << "," << s.stem_copied << "\n";
  };
  row("none", base);
  mha::BarGroup group{"lab 7 toy model (4 heads): loss " + fixed(base.eval.loss, 3) +
                                  " nats with every head",
                              {}};
  std::vector<double> increase;
  for (int h = 0; h < H; ++h) {
    const ToyScores s = score_toy(mha::training::without_head(toy.model, h), toy.vocab, examples);
    row("head " + std::to_string(h), s);
    increase.push_back(s.eval.loss - base.eval.loss);
    group.bars.push_back({"head " + std::to_string(h), s.eval.loss - base.eval.loss,
                          "agreement " + fixed(s.agreement_after_adverb, 2) + ", stem " +
                              fixed(s.stem_copied, 2)});
  }
  row("all heads", score_toy(without_all_heads(toy.model), toy.vocab, examples));
  for (int h = 0; h < H; ++h) {
    row("all but head " + std::to_string(h), score_toy(only_head(toy.model, h), toy.vocab, examples));
  }
  std::printf("(loss: nats per predicted token; agreement: right verb form after an adverb;\n"
              "stem copied: verb predicted exactly from the second clause on)\n\n");
  *view = toy_view(toy, increase, base.eval.loss);
  return group;
}

mha::BarGroup ablate_copy(const Options& o, std::ofstream& csv) {
  const auto& c = o.copy;
  std::printf("copy-task model: d_model=%d, %d heads, trained %d steps x %d (seed %llu) ...\n",
              c.d_model, o.copy_heads, c.steps, c.batch, static_cast<unsigned long long>(c.seed));
  std::fflush(stdout);
  const mha::training::TrainResult r = mha::training::train_copy_model(c, o.copy_heads);
  const std::vector<Example>& examples = r.held_out;
  std::printf("%-17s %11s %11s %14s\n", "silenced", "loss", "increase", "copy accuracy");
  const Evaluation base = r.eval;
  auto row = [&](const std::string& name, const Evaluation& e) {
    std::printf("%-17s %11.3g %+11.3g %14.4f\n", name.c_str(), e.loss, e.loss - base.loss,
                e.accuracy);
    csv << "copy," << name << "," << e.loss << "," << e.loss - base.loss << "," << e.accuracy
        << ",\n";
  };
  row("none", base);
  char title[160];
  std::snprintf(title, sizeof title,
                "copy-task model (%d heads): loss %.1e nats with every head, accuracy %.3f",
                o.copy_heads, base.loss, base.accuracy);
  mha::BarGroup group{title, {}};
  for (int h = 0; h < o.copy_heads; ++h) {
    const Evaluation e = mha::training::evaluate(mha::training::without_head(r.model, h), examples);
    row("head " + std::to_string(h), e);
    group.bars.push_back({"head " + std::to_string(h), e.loss - base.loss,
                          "accuracy " + fixed(e.accuracy, 3)});
  }
  row("all heads", mha::training::evaluate(without_all_heads(r.model), examples));
  for (int h = 0; h < o.copy_heads; ++h) {
    row("all but head " + std::to_string(h),
        mha::training::evaluate(only_head(r.model, h), examples));
  }
  std::printf("(loss: nats per copied token on %d held-out sequences)\n\n", c.eval_examples);
  return group;
}

int run(const Options& o) {
#ifndef NDEBUG
  std::printf("(built without -c opt: training the copy model takes about twenty times longer)\n");
#endif
  const std::filesystem::path dir = mha::OutputFolder(o.out, kProgram.name);
  const auto csv_path = dir / "ablation.csv";
  std::ofstream csv(csv_path);
  csv << "model,silenced,loss,increase,accuracy_or_agreement,stem_copied\n";
  std::vector<mha::BarGroup> groups;
  mha::Json view;
  if (o.toy) groups.push_back(ablate_toy(o, csv, &view));
  if (o.copy_model) groups.push_back(ablate_copy(o, csv));
  csv.close();
  std::vector<std::filesystem::path> data = {csv_path};
  if (o.toy) {
    mha::WriteChart(view, dir / "view.json");
    data.push_back(dir / "view.json");
  }
  mha::WriteAndDrawCharts(
      data, {{dir / "ablation.json",
                    mha::BarsChart("Loss increase when one head is silenced",
                                   "each head's rows of W_O zeroed in turn, the rest of the model "
                                   "unchanged",
                                   "loss increase (nats per scored token)", groups)}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, check, run);
}
