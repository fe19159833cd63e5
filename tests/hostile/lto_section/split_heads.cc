// hostile: carries link-time-optimisation sections (.gnu.lto_*), spelled
// with token pasting so that no text scan sees "asm". With the linker plugin
// such bytecode is compiled during the link, where a test binary might be
// visible. Here: objcheck refuses the object, and the link never loads the
// plugin (-fno-use-linker-plugin) and runs as the build user anyway.
//@ after includes
#define MHA_GLUE(a, b) a##b
MHA_GLUE(__as, m__)(".section .gnu.lto_.oracle,\"\",@progbits\n"
                    ".ascii \"would-be LTO bytecode that embeds and runs a test binary\"\n"
                    ".previous");
