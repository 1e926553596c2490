// Sets a model up in TFLite Micro through an op resolver tflpack wrote (<prefix>_op_resolver.h), the way a
// firmware does: MicroAllocator over one arena, resource variables for models that have them, AllocateTensors
// (where TFLite Micro looks up every operator's kernel in the resolver). tests/package/test_op_resolver_runs.py
// compiles one program that includes the resolvers and calls SetUp with one of them.
// Exit codes: 0 set up; 2 usage or unreadable model; 3 a registration failed; 4 AllocateTensors failed.
#ifndef TFLPACK_TESTS_RESOLVER_CHECK_H_
#define TFLPACK_TESTS_RESOLVER_CHECK_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tensorflow/lite/micro/micro_allocator.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/schema/schema_generated.h"

namespace resolver_check {

constexpr size_t kArenaBytes = 16u << 20;  // ample for every model tested: only the kernels are in question
alignas(16) static uint8_t arena[kArenaBytes];

// The model file's bytes, 16-byte aligned as TFLite Micro wants them; nullptr when unreadable.
inline const uint8_t* ReadModel(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return nullptr;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* data = static_cast<uint8_t*>(aligned_alloc(16, (static_cast<size_t>(size) + 15) / 16 * 16));
  if (data == nullptr || fread(data, 1, static_cast<size_t>(size), f) != static_cast<size_t>(size)) data = nullptr;
  fclose(f);
  return data;
}

template <typename Resolver, typename Register>
int SetUp(const char* path, Register register_ops) {
  const uint8_t* data = ReadModel(path);
  if (data == nullptr) return 2;
  static Resolver resolver;
  if (register_ops(resolver) != kTfLiteOk) return 3;
  tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(arena, kArenaBytes);
  if (allocator == nullptr) return 4;
  tflite::MicroResourceVariables* variables = tflite::MicroResourceVariables::Create(allocator, 16);
  tflite::MicroInterpreter interpreter(tflite::GetModel(data), resolver, allocator, variables);
  return interpreter.AllocateTensors() == kTfLiteOk ? 0 : 4;
}

}  // namespace resolver_check

#endif  // TFLPACK_TESTS_RESOLVER_CHECK_H_
