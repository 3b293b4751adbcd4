// Swift Testing runs every test of a binary at once unless told a width. Folio's tests each
// open stores (a writer, readers, dispatch queues, file watches), so 985 of them at once on two
// cores spend most of their time switching threads: `swift test` took 307 s and 9 min of CPU
// there, against 125 s and 3 min of CPU with at most four tests at a time (and 180 s one at a
// time). This runs when the test binary loads, before Swift Testing reads its configuration,
// and sets the width to twice the processors (at least 4) unless the environment already
// sets it. The variable is Swift Testing's (`SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH`,
// the environment form of `--experimental-maximum-parallelization-width`); a toolchain that
// no longer reads it runs the tests as wide as it likes, only slower.
#include "TestRunWidth.h"

#include <stdio.h>
#include <stdlib.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <unistd.h>
#endif

static const char *const variable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";
static int chosen = 0;

int folio_test_run_width(void) { return chosen; }

__attribute__((constructor)) static void folio_set_test_run_width(void) {
    const char *given = getenv(variable);
    if (given != NULL && given[0] != '\0') return;
#if defined(_WIN32)
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    long processors = (long)info.dwNumberOfProcessors;
#else
    long processors = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    int width = processors > 2 ? (int)(2 * processors) : 4;
    char text[16];
    snprintf(text, sizeof text, "%d", width);
#if defined(_WIN32)
    _putenv_s(variable, text);
#else
    setenv(variable, text, 0);
#endif
    chosen = width;
}
