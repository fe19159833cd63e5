"""What a learner runs from the kit: ./lab status, watch, hint, read, quiz and grade.

    ./lab status            each lab: not started / failing (and why) / passing, and the next one
    ./lab watch [N]         re-run lab N's public tests every time you save its file
    ./lab hint N            the next hint for lab N (--all: every hint; --reset: start over)
    ./lab read              the course in the browser (out/site/, served on 127.0.0.1)
    ./lab quiz N            lab N's quiz in the terminal
    ./lab grade             in the learner's kit: a provisional scoreboard from the public tests

status, watch and grade run the public tests, `bazel test //labs/NN_name/...`,
in this folder with Bazel's usual output base, so they share its cache with
your own `bazel test` runs; status and grade run every lab they look at in
one Bazel invocation. When a file does not compile, status and watch print
the compiler's first error that points into your own file (file:line:
message), also when the error is reported inside a library header that your
line instantiated, and the warnings about your file (-Wall -Wextra -Wshadow,
common/lab.bzl), one line.

The modules, one concern each:
    cli.py                the command line (the kit's ./lab; main.py adds the instructors')
    status.py, watch.py, hint.py, provisional.py    one command each
    reader.py             ./lab read; reader_site.py builds the site (python3-markdown,
                          python3-pygments, python3-jinja2), reader_lessons.py renders a
                          lesson, reader_panels.py what sits beside it, reader_labels.py
                          every word of it in the learner's language, reader_server.py
                          serves it on 127.0.0.1, playground.py runs lab 15's model for
                          its Mini-GPT page
    quiz.py               the quizzes (labs/NN_name/quiz.json): their check, ./lab quiz N
    public_tests.py       one `bazel test` over some labs, where each lab stands, and
                          its record for the reader (.cache/last_run.json)
    results.py            Bazel's summary, GoogleTest's XML and logs, a lab's score
    compiler_warnings.py  the warnings cache (.cache/warnings.json)
    bazel.py              Bazel's server: started by a command, shut down by it
    files.py              the learner file (stub or started), BUILD files, .cache/ JSON
    console.py            exit statuses, width, messages, lab arguments

The learner's kit ships this package and every module it imports, found by
following the imports from tools/lab/main.py's learner path (course/kit.py).
"""
