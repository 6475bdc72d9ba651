// Stub of macOS's <objc/runtime.h> (objc4 runtime/objc.h, runtime/runtime.h), as the current
// SDKs declare it (OBJC_OLD_DISPATCH_PROTOTYPES 0: IMP takes no arguments, objc_getClass returns
// Class): the types and the calls used.
#pragma once
#include <stddef.h>
typedef struct objc_class* Class;
typedef struct objc_object* id;
typedef struct objc_selector* SEL;
typedef void (*IMP)(void);
typedef bool BOOL; /* arm64; signed char on x86_64 */
#ifdef __cplusplus
extern "C" {
#endif
Class objc_getClass(const char* name);
Class objc_allocateClassPair(Class superclass, const char* name, size_t extraBytes);
void objc_registerClassPair(Class cls);
Class object_getClass(id obj);
BOOL class_addMethod(Class cls, SEL name, IMP imp, const char* types);
SEL sel_registerName(const char* str);
#ifdef __cplusplus
}
#endif
