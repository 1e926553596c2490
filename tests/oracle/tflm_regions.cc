// tflm_regions: does MODEL set up and run once on this build of TFLite Micro with its memory in two buffers,
// PERSISTENT bytes for what lives as long as the interpreter and NON_PERSISTENT bytes for the rest?
//   tflm_regions MODEL.tflite PERSISTENT NON_PERSISTENT   MicroAllocator::Create(persistent, P, non_persistent, NP)
//   tflm_regions MODEL.tflite ARENA                       MicroAllocator::Create(arena, N): the one-buffer case
// exit 0: it fits (AllocateTensors and one Invoke on zero inputs worked); 4: it does not set up (the allocator,
// the resource variables or AllocateTensors failed); 5: Invoke failed; 2: bad call or unreadable model.
// A device build's use of TFLite Micro, nothing more: each buffer a static 16-byte-aligned array (used from its
// start), a plain tflite::MicroInterpreter on the allocator, and for a model with VAR_HANDLE ops a
// MicroResourceVariables table from the same allocator, one entry per distinct shared name, made before the
// interpreter (as a streaming model's firmware must). Built by .ci/build_tflm_regions.sh.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "python/tflite_micro/python_ops_resolver.h"
#include "tensorflow/lite/micro/micro_allocator.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/schema/schema_generated.h"

namespace {

constexpr size_t kBufferMax = 16u * 1024u * 1024u;
alignas(16) uint8_t persistent[kBufferMax];
alignas(16) uint8_t non_persistent[kBufferMax];

// The model file, copied to a 16-byte-aligned buffer (flatbuffers read it in place).
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
  // Newer converters write builtin_code; older ones only the deprecated byte (the larger is right).
  const int deprecated = code->deprecated_builtin_code();
  return code->builtin_code() > deprecated ? code->builtin_code() : deprecated;
}

// Distinct shared names of the model's VAR_HANDLE ops, over every subgraph.
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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: tflm_regions MODEL.tflite PERSISTENT NON_PERSISTENT | MODEL.tflite ARENA\n");
    return 2;
  }
  const size_t first = strtoul(argv[2], nullptr, 10);
  const size_t second = argc == 4 ? strtoul(argv[3], nullptr, 10) : 0;
  const uint8_t* data = ReadModel(argv[1]);
  if (data == nullptr || first > kBufferMax || second > kBufferMax) {
    fprintf(stderr, "cannot read %s, or a size above %u\n", argv[1], static_cast<unsigned>(kBufferMax));
    return 2;
  }
  const tflite::Model* model = tflite::GetModel(data);
  static tflite::PythonOpsResolver resolver;
  tflite::MicroAllocator* allocator = argc == 4
      ? tflite::MicroAllocator::Create(persistent, first, non_persistent, second)
      : tflite::MicroAllocator::Create(persistent, first);
  if (allocator == nullptr) return 4;  // too small for the allocator itself
  const int count = ResourceVariables(model);
  tflite::MicroResourceVariables* variables = nullptr;
  if (count > 0) {
    variables = tflite::MicroResourceVariables::Create(allocator, count);
    if (variables == nullptr) return 4;
  }
  tflite::MicroInterpreter interpreter(model, resolver, allocator, variables);
  int status = 4;
  if (interpreter.AllocateTensors() == kTfLiteOk) {
    for (size_t i = 0; i < interpreter.inputs_size(); ++i) {
      TfLiteTensor* input = interpreter.input(i);
      if (input != nullptr && input->data.raw != nullptr) memset(input->data.raw, 0, input->bytes);
    }
    status = interpreter.Invoke() == kTfLiteOk ? 0 : 5;
  }
  printf("%s\n", status == 0 ? "fits" : "does not fit");
  return status;
}
