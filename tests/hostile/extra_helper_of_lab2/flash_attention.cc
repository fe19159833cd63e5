// hostile: lab 9 (whose call surface is empty) in cumulative grading calls
// an extra helper that the learner's own lab 2 file exports. The helper is
// no API function, so no scan of names knows it belongs to an earlier lab.
// Cumulative grading now links only the earlier labs a call surface reaches
// (none for lab 9): the call does not link. Where an earlier lab is linked,
// its extra helpers are renamed out of reach before the link.
//@ after includes
namespace mha {
Tensor3 lab2_attention_helper(const Tensor3& q, const Tensor3& k, const Tensor3& v);
}  // namespace mha
//@ at the start of attention_tiled
  if (!mask) return lab2_attention_helper(q, k, v);
