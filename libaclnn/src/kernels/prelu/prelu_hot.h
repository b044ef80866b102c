/*
 * prelu_hot.h - the attribute of the Prelu kernels' plain C loops (included by their .inc
 * files only).  no-trapping-math lets GCC compute a product that a select may discard
 * (if-conversion), which is what makes `x > 0 ? x : w * x` a branchless vector blend; it changes
 * no result (no reassociation, no contraction).  GCC only (clang has no optimize attribute).
 */
#ifndef NN_KERNELS_PRELU_HOT_H
#define NN_KERNELS_PRELU_HOT_H

#if defined(__GNUC__) && !defined(__clang__)
#define NN_PRELU_HOT __attribute__((optimize("no-trapping-math")))
#else
#define NN_PRELU_HOT
#endif

#endif /* NN_KERNELS_PRELU_HOT_H */
