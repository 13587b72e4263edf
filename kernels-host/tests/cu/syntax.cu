// Declarations the rewriter must see through to find every kernel (nvcc -std=c++20
// accepts all of them): default template arguments, `>>`, lambdas, attributes,
// requires-clauses, decltype, operators, class bodies and initializers at namespace scope.
#include <cuda_runtime.h>
#include <type_traits>

// A function template with a default template argument before the kernels (it once made
// every following kernel disappear).
template <typename T, int N = 4> __device__ T add_n(T x) { return x + N; }
template <class T = int, class U = std::enable_if_t<std::is_integral<T>::value>> __device__ T twice(T x) { return 2 * x; }
template <typename T, typename = std::enable_if_t<(sizeof(T) > 1)>> struct unused_t;

struct Pair { int a, b; };
__device__ bool operator<(Pair x, Pair y) { return x.a < y.a; }
__device__ bool operator>(Pair x, Pair y) { return y < x; }
__device__ Pair operator>>(Pair x, int s) { return Pair{x.a >> s, x.b >> s}; }
struct Functor {
    int k;
    __device__ int operator()(int x) const { return x * k; }
    __device__ int operator[](int i) const { return i + k; }
};
struct WithCtor { int m; __device__ WithCtor(int v); };
__device__ WithCtor::WithCtor(int v) : m{v * 2} {}

template <class T> concept Small = sizeof(T) <= 4;
template <class T> concept Addable = requires(T a) { a + a; };
template <Small T> __device__ T sq(T x) requires Addable<T> { return x * x; }

enum class Mode : int { A = 1, B = 2 };
typedef struct { int x; } anon_struct_t;
union Bits { float f; unsigned u; };
[[nodiscard]] __device__ inline int attr_fn(int x) { return x + 1; }
constexpr auto lambda_var = [](int x) { return x + 3; };
static_assert(lambda_var(1) == 4, "lambda at namespace scope");
__device__ int table[3] = {1, 2, 3};
__device__ int braced{7};
__constant__ int sizes[] = {sizeof(int), alignof(double)};
static_assert(sizeof(Pair) == 8, "{ not a brace");
__device__ decltype(sizeof(int)) width_of(int) { return sizeof(int); }
__device__ auto trailing(int x) -> decltype(x + 1) { return x + 1; }
template <typename T> constexpr T pi_v = T(3);

namespace outer::inline v1 {
__global__ void in_inline_ns(int *out) { out[0] = 11; }
}

template <typename T, int B = 32>
__global__ void __launch_bounds__(B) defaulted(T *out, int n = 2) { out[0] = add_n<T>(T(n)) + twice(1); }
template __global__ void defaulted<int>(int *, int);
template __global__ void defaulted<float, 64>(float *, int);

template <typename T> struct Box { T v; };
template <typename T> __global__ void boxed(Box<Box<T>> *b) { b->v.v = T(1); }
template __global__ void boxed<int>(Box<Box<int>> *);

template <typename T> requires std::is_arithmetic_v<T>
__global__ void constrained(T *out) { out[0] = sq(T(3)); }
template __global__ void constrained<int>(int *);

__global__ void with_lambda_default(int *out, int (*f)(int) = [](int x) { return x; }) { out[0] = 1; }

[[maybe_unused]] __global__ void attributed([[maybe_unused]] int *out) {
    Functor fn{3};
    Pair p{1, 2}, q{3, 4};
    out[0] = fn(2) + fn[1] + (p < q) + (q > p) + (p >> 1).a + [](int x) { return x + 3; }(1) + table[2] + braced + attr_fn(0);
    out[1] = (int)width_of(0) + trailing(1) + WithCtor(2).m + (int)Mode::B + pi_v<int> + sizes[0];
}

__global__ void __attribute__((noinline)) gnu_attr(float *out) { Bits b; b.u = 0x3f800000u; out[0] = b.f; }

extern "C" {
__global__ void c_after_all(int *out) { anon_struct_t a{5}; out[0] = a.x; }
}
