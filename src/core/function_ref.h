// A non-owning reference to a callable, for parameters called before the
// function returns (the idea of LLVM's function_ref and C++26's
// std::function_ref). Unlike std::function it never allocates: a lambda that
// captures three references no longer costs a heap allocation per wait in
// the progress loop of every small message.
#pragma once

#include <type_traits>
#include <utility>

namespace gdr {

template <typename Fn>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  // Binds to any callable, a temporary lambda included: the reference is
  // only valid while the callable lives (for a parameter: the call).
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                                    std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): binds like std::function
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...);
        }) {}

  R operator()(Args... a) const { return call_(obj_, std::forward<Args>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

}  // namespace gdr
