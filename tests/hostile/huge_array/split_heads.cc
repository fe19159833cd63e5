// hostile to the grader: a 1 GiB initialised array, which would make the
// compiler write a 1 GiB object file (and fill the disk across a roster).
//@ after includes
__attribute__((used)) static char huge[1u << 30] = {1};
