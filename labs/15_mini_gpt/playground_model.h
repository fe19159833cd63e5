// What the course reader's playground asks of your Mini-GPT, answered with
// your own code (./lab read's page "Your Mini-GPT"; the program is
// playground.cc, its Python side tools/lab/learner/playground.py).
//
// The protocol, one line each way over the program's stdin and stdout (the
// program opens no socket; ./lab read's server is the only one that talks to
// it, on behalf of a page that holds the session's token):
//
//   after loading:  {"vocab": [64 tokens], "config": {...}, "params", "seed",
//                    "examples": [{"prompt": [tokens], "answer", "category"}]}
//                   or {"error": "checkpoint", "detail": why}, then it exits
//   request:        run<TAB>tokens=<bos> I walk<TAB>off=1.2,0.3<TAB>mode=greedy|sample
//                   <TAB>temperature=0.8<TAB>top_k=0<TAB>seed=7<TAB>max_new=16
//   answer:         {"tokens": [T], "positions": [{"top": [[token, p] x 5]} x T],
//                    "last": [p of each of the 64 tokens after the last one],
//                    "attention": [block][head][T][T], "labels": [block][head],
//                    "continuation": [tokens], "seed", "off": [[block, head]]}
//                   or {"error": code, ...}: "unknown_token" (token, position),
//                   "empty", "too_long" (length, max), "bad_head" (blocks, heads),
//                   "bad_value" (field, value), "bad_request" (detail)
//
// Switching a head off zeroes its output before W_O: head h of block b owns
// rows [h d_head, (h+1) d_head) of that block's W_O (the concatenated heads
// multiply W_O's rows), so a copy of the model with those rows zeroed is the
// model without that head, and every later computation (the next block's
// attention, the probabilities, the continuation) runs on it.
#ifndef MHA_LABS_15_MINI_GPT_PLAYGROUND_MODEL_H_
#define MHA_LABS_15_MINI_GPT_PLAYGROUND_MODEL_H_

#include <string>
#include <utility>
#include <vector>

#include "common/programs/chart_spec.h"
#include "labs/15_mini_gpt/mini_gpt.h"

namespace mha::playground {

// The model with the heads `off` ({block, head}) switched off.
MiniGpt WithHeadsOff(const MiniGpt& model, const std::vector<std::pair<int, int>>& off);

// The held-out prompts of the lesson, each with the grammar's next token: for
// every held-out (verb, tense) pair, one prompt per category the grammar
// decides (English agreement, Spanish pronoun, stem and form), cut from its
// first held-out sentence ("I walk , you walk , he walk" -> "s").
Json Examples();

// The line written after loading: the vocabulary, the sizes, the examples.
Json Hello(const MiniGpt& model, std::uint64_t seed);

// The answer to one request line (never throws: a bad request is an
// {"error": ...} answer naming what is wrong).
Json Answer(const MiniGpt& model, const std::string& line);

// A JSON value as one line of the protocol.
std::string OneLine(const Json& answer);

}  // namespace mha::playground

#endif  // MHA_LABS_15_MINI_GPT_PLAYGROUND_MODEL_H_
