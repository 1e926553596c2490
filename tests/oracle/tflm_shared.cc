// tflm_shared: do MODELs, set up in the given order on ONE MicroAllocator over N bytes and run one at a time,
// fit? The way a firmware shares an arena between a wake-word and a command model: one allocator, one
// MicroInterpreter per model (persistent memory of each stacked at the arena's end, the head reused by
// whichever runs), each model's MicroResourceVariables (when it has VAR_HANDLE ops) made from the same
// allocator just before its interpreter.
//   tflm_shared N OUTDIR MODEL.tflite...
// Every model is set up (AllocateTensors) in order, then each runs once on zero inputs, in order; model i's
// output j is written to OUTDIR/<i>_<j>.bin, so its outputs can be compared with the model run alone (the same
// program with one model). Exit 0: they fit; 4: one does not set up in N (or the allocator does not); 5: an
// Invoke failed; 2: bad call or unreadable model. Built by .ci/build_tflm_shared.sh against TFLite Micro's
// x86-64 library (.ci/build_tflm_x86_64.sh).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "python/tflite_micro/python_ops_resolver.h"
#include "tensorflow/lite/micro/micro_allocator.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/schema/schema_generated.h"

namespace {

constexpr size_t kArenaMax = 16u * 1024u * 1024u;
alignas(16) uint8_t arena[kArenaMax];
constexpr int kMaxModels = 16;

const uint8_t* ReadModel(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return nullptr;
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* raw = static_cast<uint8_t*>(malloc(size + 16));
  if (raw == nullptr) return nullptr;
  uint8_t* data = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 15) & ~uintptr_t{15});
  const bool ok = fread(data, 1, size, f) == static_cast<size_t>(size);
  fclose(f);
  return ok ? data : nullptr;
}

int BuiltinCode(const tflite::OperatorCode* code) {
  const int deprecated = code->deprecated_builtin_code();
  return code->builtin_code() > deprecated ? code->builtin_code() : deprecated;
}

// Distinct shared names of the model's VAR_HANDLE ops (as tests/oracle/tflm_fit.cc counts them).
int ResourceVariables(const tflite::Model* model) {
  constexpr int kMaxNames = 256;
  const char* names[kMaxNames];
  int count = 0;
  if (model->subgraphs() == nullptr || model->operator_codes() == nullptr) return 0;
  for (const tflite::SubGraph* subgraph : *model->subgraphs()) {
    if (subgraph->operators() == nullptr) continue;
    for (const tflite::Operator* op : *subgraph->operators()) {
      if (BuiltinCode(model->operator_codes()->Get(op->opcode_index())) != tflite::BuiltinOperator_VAR_HANDLE) {
        continue;
      }
      const tflite::VarHandleOptions* options = op->builtin_options_as_VarHandleOptions();
      const char* name = options != nullptr && options->shared_name() != nullptr ? options->shared_name()->c_str() : "";
      int i = 0;
      while (i < count && strcmp(names[i], name) != 0) ++i;
      if (i == count && count < kMaxNames) names[count++] = name;
    }
  }
  return count;
}

bool WriteOutput(const char* folder, int model, size_t output, const TfLiteTensor* tensor) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%d_%zu.bin", folder, model, output);
  FILE* f = fopen(path, "wb");
  if (f == nullptr) return false;
  const bool ok = tensor->bytes == 0 || fwrite(tensor->data.raw, 1, tensor->bytes, f) == tensor->bytes;
  return fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc - 3;
  if (count < 1 || count > kMaxModels) {
    fprintf(stderr, "usage: tflm_shared ARENA_BYTES OUTDIR MODEL.tflite... (1 to %d models)\n", kMaxModels);
    return 2;
  }
  const size_t size = strtoul(argv[1], nullptr, 10);
  if (size > kArenaMax) {
    fprintf(stderr, "ARENA_BYTES above %u\n", static_cast<unsigned>(kArenaMax));
    return 2;
  }
  const tflite::Model* models[kMaxModels];
  for (int i = 0; i < count; ++i) {
    const uint8_t* data = ReadModel(argv[3 + i]);
    if (data == nullptr) {
      fprintf(stderr, "cannot read %s\n", argv[3 + i]);
      return 2;
    }
    models[i] = tflite::GetModel(data);
  }
  static tflite::PythonOpsResolver resolver;
  tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(arena, size);
  if (allocator == nullptr) {
    printf("does not fit in %u B: the allocator itself\n", static_cast<unsigned>(size));
    return 4;
  }
  // The interpreters live as long as the program (placement new: no destructor runs between models).
  alignas(tflite::MicroInterpreter) static uint8_t room[kMaxModels][sizeof(tflite::MicroInterpreter)];
  tflite::MicroInterpreter* interpreters[kMaxModels];
  for (int i = 0; i < count; ++i) {
    tflite::MicroResourceVariables* table = nullptr;
    const int variables = ResourceVariables(models[i]);
    if (variables > 0) {
      table = tflite::MicroResourceVariables::Create(allocator, variables);
      if (table == nullptr) {
        printf("does not fit in %u B: model %d's resource variables\n", static_cast<unsigned>(size), i);
        return 4;
      }
    }
    interpreters[i] = new (room[i]) tflite::MicroInterpreter(models[i], resolver, allocator, table);
    if (interpreters[i]->AllocateTensors() != kTfLiteOk) {
      printf("does not fit in %u B: model %d does not set up\n", static_cast<unsigned>(size), i);
      return 4;
    }
    printf("model %d set up: %zu B used\n", i, allocator->used_bytes());
  }
  for (int i = 0; i < count; ++i) {
    tflite::MicroInterpreter& interpreter = *interpreters[i];
    for (size_t j = 0; j < interpreter.inputs_size(); ++j) {
      TfLiteTensor* input = interpreter.input(j);
      if (input != nullptr && input->data.raw != nullptr) memset(input->data.raw, 0, input->bytes);
    }
    if (interpreter.Invoke() != kTfLiteOk) {
      printf("model %d: Invoke failed in %u B\n", i, static_cast<unsigned>(size));
      return 5;
    }
    for (size_t j = 0; j < interpreter.outputs_size(); ++j) {
      if (!WriteOutput(argv[2], i, j, interpreter.output(j))) {
        fprintf(stderr, "cannot write model %d's output %zu into %s\n", i, j, argv[2]);
        return 2;
      }
    }
  }
  printf("fits in %u B\n", static_cast<unsigned>(size));
  return 0;
}
