// hostile: the compiler reads an endless file (memory and time bomb at
// compile time).
#include "labs/01_split_heads/split_heads.h"
#include "/dev/zero"
