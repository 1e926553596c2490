// tflm_fit: does MODEL set up and run once in exactly N bytes of arena, on this build of TFLite Micro?
//   tflm_fit MODEL.tflite N        exit 0: it fits (AllocateTensors and one Invoke on zero inputs worked)
//                                  4: it does not set up in N (AllocateTensors failed); 5: Invoke failed; 2: bad call
//   tflm_fit MODEL.tflite N --set-up-only   exit 0 once AllocateTensors worked, without the Invoke (a build
//                                  whose kernels cannot run here: its set-up alone is the target's)
//   tflm_fit --registered [CUSTOM...]  prints each builtin operator this build's op resolver registers, then
//                                  each CUSTOM code it registers (what the tests compare the coverage table with)
// A device build's use of TFLite Micro, nothing more: the arena is a static 16-byte-aligned buffer, the
// interpreter a plain tflite::MicroInterpreter. A model with VAR_HANDLE ops gets a MicroResourceVariables
// table made from the same arena, one entry per distinct shared name, before the interpreter (as a streaming
// model's firmware must). Built by .ci/build_tflm_targets.sh against the shared TFLite Micro sources, run
// under qemu-arm (always under a timeout: a failed TFLite Micro check halts by spinning).
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

constexpr size_t kArenaMax = 8u * 1024u * 1024u;
alignas(16) uint8_t arena[kArenaMax];

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

bool set_up_only = false;

int SetUpAndRun(tflite::MicroInterpreter& interpreter) {
  if (interpreter.AllocateTensors() != kTfLiteOk) return 4;
  if (set_up_only) return 0;
  for (size_t i = 0; i < interpreter.inputs_size(); ++i) {
    TfLiteTensor* input = interpreter.input(i);
    if (input != nullptr && input->data.raw != nullptr) memset(input->data.raw, 0, input->bytes);
  }
  return interpreter.Invoke() == kTfLiteOk ? 0 : 5;
}

int Registered(const tflite::MicroOpResolver& resolver, int argc, char** argv) {
  for (int op = tflite::BuiltinOperator_MIN; op <= tflite::BuiltinOperator_MAX; ++op) {
    const auto code = static_cast<tflite::BuiltinOperator>(op);
    if (code != tflite::BuiltinOperator_CUSTOM && resolver.FindOp(code) != nullptr) {
      printf("%s\n", tflite::EnumNameBuiltinOperator(code));
    }
  }
  for (int i = 2; i < argc; ++i) {
    if (resolver.FindOp(argv[i]) != nullptr) printf("%s\n", argv[i]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  static tflite::PythonOpsResolver resolver;
  if (argc >= 2 && strcmp(argv[1], "--registered") == 0) return Registered(resolver, argc, argv);
  set_up_only = argc == 4 && strcmp(argv[3], "--set-up-only") == 0;
  if (argc != 3 && !set_up_only) {
    fprintf(stderr, "usage: tflm_fit MODEL.tflite ARENA_BYTES [--set-up-only]\n");
    return 2;
  }
  const size_t size = strtoul(argv[2], nullptr, 10);
  const uint8_t* data = ReadModel(argv[1]);
  if (data == nullptr || size > kArenaMax) {
    fprintf(stderr, "cannot read %s, or ARENA_BYTES above %u\n", argv[1], static_cast<unsigned>(kArenaMax));
    return 2;
  }
  const tflite::Model* model = tflite::GetModel(data);
  const int variables = ResourceVariables(model);
  int status;
  if (variables == 0) {
    tflite::MicroInterpreter interpreter(model, resolver, arena, size);
    status = SetUpAndRun(interpreter);
  } else {
    tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(arena, size);
    if (allocator == nullptr) return 4;  // too small for the allocator itself
    tflite::MicroResourceVariables* table = tflite::MicroResourceVariables::Create(allocator, variables);
    if (table == nullptr) return 4;
    tflite::MicroInterpreter interpreter(model, resolver, allocator, table);
    status = SetUpAndRun(interpreter);
  }
  printf("%s in %u B\n", status == 0 ? "fits" : "does not fit", static_cast<unsigned>(size));
  return status;
}
