// tflm_sizes: sizeof/alignof of the TFLite Micro structures an arena holds, as one compiler lays them out.
// Compiled (not run) by benchmarks/tflm_struct_sizes.py for each device ABI; the sizes are read back from the
// object's data section. Facts for packager/kernels/tflm_arena.py's targets.
#include "tensorflow/lite/micro/arena_allocator/non_persistent_arena_buffer_allocator.h"
#include "tensorflow/lite/micro/arena_allocator/persistent_arena_buffer_allocator.h"
#include "tensorflow/lite/micro/arena_allocator/single_arena_buffer_allocator.h"
#include "tensorflow/lite/micro/memory_planner/greedy_memory_planner.h"
#include "tensorflow/lite/micro/micro_allocation_info.h"
#include "tensorflow/lite/micro/micro_allocator.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/micro/kernels/conv.h"
#include "tensorflow/lite/micro/kernels/fully_connected.h"
#include "tensorflow/lite/micro/kernels/lstm_shared.h"
#include "tensorflow/lite/micro/kernels/softmax.h"
#include "tensorflow/lite/micro/kernels/pooling.h"
#include "tensorflow/lite/micro/kernels/add.h"
#include "tensorflow/lite/micro/kernels/mul.h"
#include "tensorflow/lite/micro/kernels/sub.h"
#include "tensorflow/lite/micro/kernels/svdf.h"
#include "tensorflow/lite/micro/kernels/quantize.h"
#include "tensorflow/lite/micro/kernels/reduce.h"
#include "tensorflow/lite/micro/kernels/logistic.h"
#include "tensorflow/lite/micro/kernels/dequantize.h"
#include "tensorflow/lite/micro/kernels/pad.h"
#include "tensorflow/lite/micro/kernels/leaky_relu.h"
#include "tensorflow/lite/micro/kernels/activations.h"
#define ENTRY(T) {sizeof(T), alignof(T)}
struct Entry { unsigned size, align; };
extern "C" const Entry tflm_sizes[] = {
    ENTRY(tflite::SingleArenaBufferAllocator),  // tflite::SingleArenaBufferAllocator
    ENTRY(tflite::GreedyMemoryPlanner),  // tflite::GreedyMemoryPlanner
    ENTRY(tflite::MicroAllocator),  // tflite::MicroAllocator
    ENTRY(tflite::SubgraphAllocations),  // tflite::SubgraphAllocations
    ENTRY(TfLiteEvalTensor),  // TfLiteEvalTensor
    ENTRY(tflite::NodeAndRegistration),  // tflite::NodeAndRegistration
    ENTRY(TfLiteTensor),  // TfLiteTensor
    ENTRY(TfLiteAffineQuantization),  // TfLiteAffineQuantization
    ENTRY(tflite::ScratchBufferHandle),  // tflite::ScratchBufferHandle
    ENTRY(tflite::internal::ScratchBufferRequest),  // tflite::internal::ScratchBufferRequest
    ENTRY(tflite::AllocationInfo),  // tflite::AllocationInfo
    ENTRY(tflite::MicroResourceVariables),  // tflite::MicroResourceVariables
    ENTRY(tflite::OpDataConv),  // tflite::OpDataConv
    ENTRY(tflite::OpDataFullyConnected),  // tflite::OpDataFullyConnected
    ENTRY(tflite::OpDataLSTM),  // tflite::OpDataLSTM
    ENTRY(tflite::SoftmaxParams),  // tflite::SoftmaxParams
    ENTRY(tflite::OpDataPooling),  // tflite::OpDataPooling
    ENTRY(tflite::OpDataAdd),  // tflite::OpDataAdd
    ENTRY(tflite::OpDataMul),  // tflite::OpDataMul
    ENTRY(tflite::OpDataSub),  // tflite::OpDataSub
    ENTRY(tflite::OpDataSvdf),  // tflite::OpDataSvdf
    ENTRY(tflite::OpDataQuantizeReference),  // tflite::OpDataQuantizeReference
    ENTRY(tflite::OpDataReduce),  // tflite::OpDataReduce
    ENTRY(tflite::OpDataLogistic),  // tflite::OpDataLogistic
    ENTRY(tflite::DequantizeOpData),  // tflite::DequantizeOpData
    ENTRY(tflite::LeakyReluOpData),  // tflite::LeakyReluOpData
    ENTRY(tflite::ReluOpData),  // tflite::ReluOpData
    ENTRY(TfLiteMirrorPaddingParams),  // TfLiteMirrorPaddingParams
    ENTRY(TfLiteConvParams),  // TfLiteConvParams
    ENTRY(TfLiteConv3DParams),  // TfLiteConv3DParams
    ENTRY(TfLitePoolParams),  // TfLitePoolParams
    ENTRY(TfLiteDepthwiseConvParams),  // TfLiteDepthwiseConvParams
    ENTRY(TfLiteSVDFParams),  // TfLiteSVDFParams
    ENTRY(TfLiteRNNParams),  // TfLiteRNNParams
    ENTRY(TfLiteSequenceRNNParams),  // TfLiteSequenceRNNParams
    ENTRY(TfLiteBidirectionalSequenceRNNParams),  // TfLiteBidirectionalSequenceRNNParams
    ENTRY(TfLiteFullyConnectedParams),  // TfLiteFullyConnectedParams
    ENTRY(TfLiteLSHProjectionParams),  // TfLiteLSHProjectionParams
    ENTRY(TfLiteSoftmaxParams),  // TfLiteSoftmaxParams
    ENTRY(TfLiteConcatenationParams),  // TfLiteConcatenationParams
    ENTRY(TfLiteAddParams),  // TfLiteAddParams
    ENTRY(TfLiteSpaceToBatchNDParams),  // TfLiteSpaceToBatchNDParams
    ENTRY(TfLiteBatchToSpaceNDParams),  // TfLiteBatchToSpaceNDParams
    ENTRY(TfLiteBatchMatMulParams),  // TfLiteBatchMatMulParams
    ENTRY(TfLiteMulParams),  // TfLiteMulParams
    ENTRY(TfLiteSubParams),  // TfLiteSubParams
    ENTRY(TfLiteDivParams),  // TfLiteDivParams
    ENTRY(TfLiteL2NormParams),  // TfLiteL2NormParams
    ENTRY(TfLiteLocalResponseNormParams),  // TfLiteLocalResponseNormParams
    ENTRY(TfLiteLSTMParams),  // TfLiteLSTMParams
    ENTRY(TfLiteUnidirectionalSequenceLSTMParams),  // TfLiteUnidirectionalSequenceLSTMParams
    ENTRY(TfLiteBidirectionalSequenceLSTMParams),  // TfLiteBidirectionalSequenceLSTMParams
    ENTRY(TfLiteResizeBilinearParams),  // TfLiteResizeBilinearParams
    ENTRY(TfLiteResizeNearestNeighborParams),  // TfLiteResizeNearestNeighborParams
    ENTRY(TfLitePadParams),  // TfLitePadParams
    ENTRY(TfLitePadV2Params),  // TfLitePadV2Params
    ENTRY(TfLiteReshapeParams),  // TfLiteReshapeParams
    ENTRY(TfLiteSkipGramParams),  // TfLiteSkipGramParams
    ENTRY(TfLiteSpaceToDepthParams),  // TfLiteSpaceToDepthParams
    ENTRY(TfLiteDepthToSpaceParams),  // TfLiteDepthToSpaceParams
    ENTRY(TfLiteCastParams),  // TfLiteCastParams
    ENTRY(TfLiteEmbeddingLookupSparseParams),  // TfLiteEmbeddingLookupSparseParams
    ENTRY(TfLiteGatherParams),  // TfLiteGatherParams
    ENTRY(TfLiteTransposeParams),  // TfLiteTransposeParams
    ENTRY(TfLiteReducerParams),  // TfLiteReducerParams
    ENTRY(TfLiteSplitParams),  // TfLiteSplitParams
    ENTRY(TfLiteSplitVParams),  // TfLiteSplitVParams
    ENTRY(TfLiteSqueezeParams),  // TfLiteSqueezeParams
    ENTRY(TfLiteStridedSliceParams),  // TfLiteStridedSliceParams
    ENTRY(TfLiteArgMaxParams),  // TfLiteArgMaxParams
    ENTRY(TfLiteArgMinParams),  // TfLiteArgMinParams
    ENTRY(TfLiteTransposeConvParams),  // TfLiteTransposeConvParams
    ENTRY(TfLiteSparseToDenseParams),  // TfLiteSparseToDenseParams
    ENTRY(TfLiteShapeParams),  // TfLiteShapeParams
    ENTRY(TfLiteRankParams),  // TfLiteRankParams
    ENTRY(TfLiteFakeQuantParams),  // TfLiteFakeQuantParams
    ENTRY(TfLitePackParams),  // TfLitePackParams
    ENTRY(TfLiteOneHotParams),  // TfLiteOneHotParams
    ENTRY(TfLiteUnpackParams),  // TfLiteUnpackParams
    ENTRY(TfLiteLeakyReluParams),  // TfLiteLeakyReluParams
    ENTRY(TfLiteUniqueParams),  // TfLiteUniqueParams
    ENTRY(TfLiteReverseSequenceParams),  // TfLiteReverseSequenceParams
    ENTRY(TfLiteMatrixDiagParams),  // TfLiteMatrixDiagParams
    ENTRY(TfLiteMatrixSetDiagParams),  // TfLiteMatrixSetDiagParams
    ENTRY(TfLiteIfParams),  // TfLiteIfParams
    ENTRY(TfLiteWhileParams),  // TfLiteWhileParams
    ENTRY(TfLiteCumsumParams),  // TfLiteCumsumParams
    ENTRY(TfLiteCallOnceParams),  // TfLiteCallOnceParams
    ENTRY(TfLiteHashtableParams),  // TfLiteHashtableParams
    ENTRY(TfLiteVarHandleParams),  // TfLiteVarHandleParams
    ENTRY(TfLiteRandomParams),  // TfLiteRandomParams
    ENTRY(TfLiteBucketizeParams),  // TfLiteBucketizeParams
    ENTRY(TfLiteGeluParams),  // TfLiteGeluParams
    ENTRY(TfLiteReduceWindowParams),  // TfLiteReduceWindowParams
    ENTRY(tflite::PersistentArenaBufferAllocator),  // tflite::PersistentArenaBufferAllocator
    ENTRY(tflite::NonPersistentArenaBufferAllocator),  // tflite::NonPersistentArenaBufferAllocator
};
