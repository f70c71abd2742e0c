/*
 * ncu_csv.h: importing Nsight Compute CSV exports (ncu --csv, details page,
 * and ncu --csv --page raw) as samples of a run.
 *
 * Program output and ==PROF== lines mixed into the export are skipped;
 * thousands separators, long quoted kernel names, ragged rule rows and the
 * units row of the raw page are handled.  Errors as "FILE:LINE: message".
 */
#ifndef KGATE_NCU_CSV_H
#define KGATE_NCU_CSV_H

#include "kgate/store.h"

/* Fill what the export says of the GPU (device name, ...) into run. */
int ncu_csv_read_header(const char *path, struct kg_run_info *run);

/* Add the export's metrics to the open run, one launch per ncu "ID". */
int ncu_csv_ingest(struct kg_store *st, const char *path, const char *benchmark,
		   size_t *kernels, size_t *samples);

#endif
