// hostile: lab 13 calls back lab 10's mha_backward with a layer it broke
// itself: a W_O of one row instead of d_model, then n_heads * d_head larger
// than d_model. The reference trusts a layer's shapes (it checks x, d_y and
// the mask only), so it read and wrote past the weights in the process that
// held the hidden goldens and returned that memory as dW_V. Every function
// of the file makes the two calls and throws what came back. The reference
// now runs in a process of its own, which refuses both layers before any
// reference code runs (tests/common/call_back_checks.cc).
//@ after includes
#include <string>

//@ paste pieces/malformed_layer_call_back.cc
//@ at the start of AttentionOnlyTransformer::AttentionOnlyTransformer
  Leak();
//@ at the start of AttentionOnlyTransformer::logits
  Leak();
//@ at the start of AttentionOnlyTransformer::attention_weights
  Leak();
//@ at the start of loss_and_grads
  Leak();
//@ at the start of composition_scores
  Leak();
