// drift: a shape-dependent mistake. combine_heads reshapes (n_heads, T,
// d_head) straight to (T, d_model), without moving the heads axis behind the
// tokens axis, but only when d_head is odd and there is more than one head and
// one token: a fresh-input test that draws such sizes catches it, one that
// does not passes. Which sizes a grading draws must depend on the course key
// and the file only, never on the machine or its work root.
//@ at the start of combine_heads
  if (heads.shape(2) % 2 == 1 && heads.shape(0) > 1 && heads.shape(1) > 1) {
    // (n_heads, T, d_head) read as (T, d_model): the heads axis left in front.
    Tensor2 wrong = xt::reshape_view(heads, {heads.shape(1), heads.shape(0) * heads.shape(2)});
    return wrong;
  }
