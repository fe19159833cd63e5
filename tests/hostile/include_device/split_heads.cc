// hostile to the grader: the compiler opens a terminal device and waits for
// input that never comes (no CPU used, so a CPU limit never fires). The
// include goes through a macro so that a text scan of #include lines does
// not see the path. Stopped by the compile's wall-clock limit.
//@ after includes
#define MHA_DEVICE "/dev/ptmx"
#include MHA_DEVICE
