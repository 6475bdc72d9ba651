// Stub of macOS's <objc/message.h> (objc4 runtime/message.h), OBJC_OLD_DISPATCH_PROTOTYPES 0:
// objc_msgSend is declared without arguments and must be cast to the method's type to be called.
#pragma once
#include <objc/runtime.h>
#ifdef __cplusplus
extern "C" {
#endif
void objc_msgSend(void);
#ifdef __cplusplus
}
#endif
