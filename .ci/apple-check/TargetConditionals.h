/* The one macOS SDK header ring's C code needs (include/ring-core/base.h), for type-checking
 * fable for Apple targets on Linux (.ci/run: cargo clippy --target *-apple-darwin). There is no
 * SDK here; ring's objects are compiled (its build script insists) but never linked. A real
 * macOS build uses the SDK's own header. */
#ifndef FABLE_CI_TARGET_CONDITIONALS_H
#define FABLE_CI_TARGET_CONDITIONALS_H
#define TARGET_OS_MAC 1
#define TARGET_OS_OSX 1
#define TARGET_OS_IPHONE 0
#define TARGET_OS_IOS 0
#define TARGET_OS_TV 0
#define TARGET_OS_WATCH 0
#define TARGET_OS_SIMULATOR 0
#define TARGET_OS_EMBEDDED 0
#endif
