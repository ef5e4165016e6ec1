/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_inspect: `flowcut-bench inspect`, what the inspector's reading of
 * a hello costs on one core (inspect/fc_tls, fc_ja, fc_quic), each figure
 * beside a floor measured in the same run.  Called from flowcut-bench's
 * main(); single-threaded; holds nothing after it returns.
 */
#ifndef FLOWCUT_BENCH_INSPECT_H
#define FLOWCUT_BENCH_INSPECT_H

/*
 * bench_inspect - run `flowcut-bench inspect`; argv[0] is "inspect".
 * Prints the figures; returns the process's exit status: 0, 1 when a
 * measured call did not give the answer it must (nothing is printed for
 * it), 2 for a usage error.
 */
int bench_inspect(int argc, char **argv);

#endif
