// How many tests Swift Testing runs at once in Folio's test binary: see TestRunWidth.c.
#ifndef FOLIO_TEST_RUN_WIDTH_H
#define FOLIO_TEST_RUN_WIDTH_H

/// The width set at load, or 0 when the environment already said one.
int folio_test_run_width(void);

#endif
