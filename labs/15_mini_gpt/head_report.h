// What each head of a trained MiniGpt does on one sentence, for
// train_mini_gpt (not part of the graded API): lab 7's profile and label per
// head, where each head looks from a few grammar-fixed positions, every
// head's map as a chart, and the course reader's head-viewer data.
#ifndef MHA_LABS_15_MINI_GPT_HEAD_REPORT_H_
#define MHA_LABS_15_MINI_GPT_HEAD_REPORT_H_

#include <string>
#include <vector>

#include "common/programs/chart_spec.h"
#include "labs/07_head_analysis/head_analysis.h"
#include "labs/15_mini_gpt/mini_gpt.h"

namespace mha::gpt {

struct HeadReport {
  std::vector<int> ids;                    // the sentence the heads read (T tokens)
  std::vector<std::string> tokens;         // its tokens, as text
  std::vector<Tensor3> weights;            // per block (H, T, T): your MiniGpt::attention_weights
  std::vector<std::vector<HeadProfile>> profiles;  // per block, per head: your lab 7
  std::vector<std::vector<std::string>> labels;    // classify_head of each profile
  // The query positions the table shows ("he walk" -> s, ...) and, per block
  // and head, the key each one weighs most and that weight.
  std::vector<int> probes;
  std::vector<std::string> probe_names;
  std::vector<std::vector<std::vector<int>>> top_key;      // [block][head][probe]
  std::vector<std::vector<std::vector<float>>> top_weight;  // [block][head][probe]
};

// The heads of `model` on `ids` (1 <= T <= max_len); the probes are the
// positions of `ids` whose next token is the first "s", the first Spanish
// stem and the first Spanish ending or form (those present).
HeadReport report_heads(const MiniGpt& model, const std::vector<int>& ids);

// Prints the table: one line per head. Blocks are numbered from 1 and heads
// from 0 here, in the charts and in the viewer, as the reader's playground and
// lab 13's program number them.
void print_heads(const HeadReport& r);

// Every head's map, tokens on both axes: one panel per head, a row per block.
Json heads_chart(const HeadReport& r, const std::string& subtitle);

// The reader's head viewer (tools/reader/heads.js): weights, lab 7's label
// as the role, the profile as scores.
Json heads_view(const HeadReport& r, const std::string& title);

// The head table as JSON (--json): per block and head, the profile, the
// label and the probes' top keys.
Json heads_json(const HeadReport& r);

}  // namespace mha::gpt

#endif  // MHA_LABS_15_MINI_GPT_HEAD_REPORT_H_
