// hostile: makes the compiler quote files outside the lab in its error
// messages (which reach the report): a root-only file through a system
// include path, and the suite's own files.
//@ after includes
#include </usr/include/../../etc/shadow>
#include "@CANARY@"
