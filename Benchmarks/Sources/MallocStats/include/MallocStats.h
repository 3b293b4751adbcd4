#ifndef FOLIO_BENCH_MALLOC_STATS_H
#define FOLIO_BENCH_MALLOC_STATS_H

#include <stddef.h>

/// Bytes the C heap has handed out and not taken back (glibc's mallinfo2: arena bytes in
/// use plus mmapped blocks); 0 where it is not available.
size_t folio_bench_heap_in_use(void);

/// Returns free heap memory to the system (glibc's malloc_trim), so that the resident
/// set reflects what is live; does nothing elsewhere.
void folio_bench_trim(void);

#endif
