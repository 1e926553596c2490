/* Checks the multi-pass plan of a generated <prefix>_plan.h (a model with dynamic shapes) from the
 * header's own tables: every planned tensor lies inside its arena of the multi-pass plan, at an
 * aligned offset, in a pass inside the range; no two tensors alive at the same step of the same
 * arena overlap there. Prints one symbol's bounds, so the test sees the macros.
 * Build: cc -DPREFIX=NAME -DPLAN_HEADER='"name_plan.h"' -DSYMBOL=IMAGE_0 check_passes.c */
#include <stdint.h>
#include <stdio.h>
#include PLAN_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(a) #a
#define STR(a) STR_(a)
#define T(name) CAT(PREFIX, name)
#define SYM(bound) CAT(CAT(CAT(PREFIX, _SYM_), SYMBOL), bound)

static int32_t root_of(int32_t i) {
    while (T(_TENSOR_ALIAS_OF)[i] >= 0) {
        i = T(_TENSOR_ALIAS_OF)[i];
    }
    return i;
}

int main(void) {
    int32_t i, j, planned = 0, failures = 0;
    for (i = 0; i < T(_TENSOR_COUNT); ++i) {
        int32_t off = T(_MULTIPASS_OFFSETS)[i], size = T(_TENSOR_SIZES)[i];
        int32_t arena = T(_TENSOR_ARENA)[i], pass = T(_TENSOR_PASSES)[i];
        if (off < 0) {
            continue;
        }
        ++planned;
        if (arena < 0 || arena >= T(_ARENA_COUNT) || pass < 0 || pass >= T(_PASS_COUNT) ||
            off % T(_OFFSET_ALIGNMENT) != 0 || (int64_t)off + size > T(_MULTIPASS_ARENA_SIZES)[arena]) {
            printf("tensor %ld (pass %ld) [%ld, %ld) is outside arena %ld\n", (long)i, (long)pass,
                   (long)off, (long)off + size, (long)arena);
            ++failures;
        }
        for (j = i + 1; j < T(_TENSOR_COUNT); ++j) {
            int32_t oj = T(_MULTIPASS_OFFSETS)[j];
            if (oj < 0 || T(_TENSOR_ARENA)[j] != arena || root_of(i) == root_of(j) ||
                T(_TENSOR_LAST_OP)[i] < T(_TENSOR_FIRST_OP)[j] ||
                T(_TENSOR_LAST_OP)[j] < T(_TENSOR_FIRST_OP)[i]) {
                continue;
            }
            if (off < oj + T(_TENSOR_SIZES)[j] && oj < off + size) {
                printf("tensors %ld and %ld are alive together and overlap\n", (long)i, (long)j);
                ++failures;
            }
        }
    }
    printf("%ld planned tensors, %ld symbols, %s in [%ld, %ld], multi-pass arena %ld B, %ld failures\n",
           (long)planned, (long)T(_SYMBOL_COUNT), STR(SYMBOL), (long)SYM(_MIN), (long)SYM(_MAX),
           (long)T(_MULTIPASS_ARENA_BYTES), (long)failures);
    return failures == 0 ? 0 : 1;
}
