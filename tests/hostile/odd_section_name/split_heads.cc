// hostile to the grader itself: a correct lab whose object has a section and
// a symbol whose names are not valid UTF-8 and hold terminal escapes. An
// older object check crashed decoding them and zeroed every lab as "grader
// error". It must earn exactly what the code earns.
//@ after includes
__attribute__((section(".data.\xff\x1b[31m"), used)) static int odd_section = 1;
extern "C" __attribute__((used)) int odd_symbol_name_\u00e9(void) { return odd_section; }
