/* Checks a generated <prefix>_plan.h from its own tables: every planned tensor lies inside its
 * arena, and no two tensors alive at the same step of the same arena overlap in memory (a tensor
 * and its alias share memory on purpose). Also links the model array and checks its alignment.
 * Build: cc -DPREFIX=NAME -DPLAN_HEADER='"name_plan.h"' -DMODEL_HEADER='"name_model.h"'
 *           -DMODEL_ARRAY=name_model check_plan.c name_model.c */
#include <stdint.h>
#include <stdio.h>
#include PLAN_HEADER
#include MODEL_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T(name) CAT(PREFIX, name)

/* The arena the header declares, in a section of our choosing: it must compile and be aligned. */
T(_DECLARE_ARENA)(tensor_arena, ".bss.tflpack_check");

static int32_t root_of(int32_t i) {
    while (T(_TENSOR_ALIAS_OF)[i] >= 0) {
        i = T(_TENSOR_ALIAS_OF)[i];
    }
    return i;
}

int main(void) {
    int32_t i, j, planned = 0, pairs = 0, failures = 0;
    for (i = 0; i < T(_TENSOR_COUNT); ++i) {
        int32_t off = T(_TENSOR_OFFSETS)[i], size = T(_TENSOR_SIZES)[i], arena = T(_TENSOR_ARENA)[i];
        if (off < 0) {
            continue;
        }
        ++planned;
        if (arena < 0 || arena >= T(_ARENA_COUNT) || off % T(_OFFSET_ALIGNMENT) != 0 ||
            (int64_t)off + size > T(_ARENA_SIZES)[arena]) {
            printf("tensor %ld [%ld, %ld) is outside arena %ld\n", (long)i, (long)off,
                   (long)off + size, (long)arena);
            ++failures;
        }
        for (j = i + 1; j < T(_TENSOR_COUNT); ++j) {
            int32_t oj = T(_TENSOR_OFFSETS)[j];
            if (oj < 0 || T(_TENSOR_ARENA)[j] != arena || root_of(i) == root_of(j)) {
                continue;
            }
            if (T(_TENSOR_LAST_OP)[i] < T(_TENSOR_FIRST_OP)[j] ||
                T(_TENSOR_LAST_OP)[j] < T(_TENSOR_FIRST_OP)[i]) {
                continue; /* never alive at the same step */
            }
            ++pairs;
            if (off < oj + T(_TENSOR_SIZES)[j] && oj < off + size) {
                printf("tensors %ld and %ld are alive together and overlap\n", (long)i, (long)j);
                ++failures;
            }
        }
    }
    for (i = 0; i < T(_TENSOR_COUNT); ++i) {
        int32_t obj = T(_TENSOR_OBJECTS)[i];
        if (T(_TENSOR_OFFSETS)[i] >= 0 && (obj < 0 || obj >= T(_OBJECT_COUNT) ||
                                           T(_OBJECT_SIZES)[obj] < T(_TENSOR_SIZES)[i])) {
            printf("tensor %ld has no fitting shared object\n", (long)i);
            ++failures;
        }
    }
    if ((uintptr_t)tensor_arena % T(_ARENA_ALIGNMENT) != 0 || (uintptr_t)MODEL_ARRAY % 16 != 0 ||
        sizeof(MODEL_ARRAY) != CAT(MODEL_ARRAY, _len)) {
        printf("arena or model array misaligned, or the model length is wrong\n");
        ++failures;
    }
    printf("%ld planned tensors, %ld pairs alive together checked, %ld failures\n", (long)planned,
           (long)pairs, (long)failures);
    return failures == 0 ? 0 : 1;
}
