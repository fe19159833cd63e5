// hostile: lab 9 hands every call to the learner's OWN lab 2 (cumulative
// grading links the learner's earlier labs), 256 query rows at a time: the
// first thing a tired learner tries. Lab 9's call surface is empty, so the
// linked object is rejected, naming attention_batched. The trick is
// delegate_attention_chunks', graded in cumulative mode:
//@ paste delegate_attention_chunks/flash_attention.cc
