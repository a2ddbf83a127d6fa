#pragma once
// tenax::Error and the checking helpers every op uses. Messages begin with "[op]".
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tenax {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

template <class... A>
[[noreturn]] void fail(std::string_view op, const A&... a) {
  std::ostringstream s;
  s << '[' << op << "] ";
  (s << ... << a);
  throw Error(s.str());
}

}  // namespace detail
}  // namespace tenax

// Throws tenax::Error("[op] ...") when cond is false. The message parts are streamed.
#define TENAX_CHECK(cond, op, ...)              \
  do {                                          \
    if (!(cond)) [[unlikely]]                   \
      ::tenax::detail::fail((op), __VA_ARGS__); \
  } while (0)
