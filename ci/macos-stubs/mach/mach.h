// Stub of macOS's <mach/mach.h> (xnu osfmk/mach: mach_types.h, message.h, kern_return.h,
// task_info.h, task.h, mach_port.h, vm_map.h, mach_init.h): the types, values and calls used.
#pragma once
#include <stdint.h>
typedef unsigned int natural_t;
typedef int integer_t;
typedef int kern_return_t;
typedef natural_t mach_port_t;
typedef natural_t mach_port_name_t;
typedef mach_port_t task_t, task_name_t, task_inspect_t, thread_act_t, ipc_space_t, vm_map_t;
typedef thread_act_t* thread_act_array_t;
typedef natural_t mach_msg_type_number_t;
typedef natural_t task_flavor_t;
typedef integer_t* task_info_t;
typedef uintptr_t vm_address_t;
typedef uintptr_t vm_size_t;
typedef uint64_t mach_vm_size_t;
typedef int policy_t;
struct time_value {
  integer_t seconds;
  integer_t microseconds;
};
typedef struct time_value time_value_t;
#define KERN_SUCCESS 0
#define MACH_TASK_BASIC_INFO 20 /* always 64-bit basic info */
struct mach_task_basic_info {
  mach_vm_size_t virtual_size;      /* virtual memory size (bytes) */
  mach_vm_size_t resident_size;     /* resident memory size (bytes) */
  mach_vm_size_t resident_size_max; /* maximum resident memory size (bytes) */
  time_value_t user_time;           /* total user run time for terminated threads */
  time_value_t system_time;         /* total system run time for terminated threads */
  policy_t policy;                  /* default policy for new threads */
  integer_t suspend_count;          /* suspend count for task */
};
typedef struct mach_task_basic_info mach_task_basic_info_data_t;
#define MACH_TASK_BASIC_INFO_COUNT (sizeof(mach_task_basic_info_data_t) / sizeof(natural_t))
#ifdef __cplusplus
extern "C" {
#endif
extern mach_port_t mach_task_self_;
#define mach_task_self() mach_task_self_
kern_return_t task_info(task_name_t target_task, task_flavor_t flavor, task_info_t task_info_out,
                        mach_msg_type_number_t* task_info_outCnt);
kern_return_t task_threads(task_inspect_t target_task, thread_act_array_t* act_list,
                           mach_msg_type_number_t* act_listCnt);
kern_return_t mach_port_deallocate(ipc_space_t task, mach_port_name_t name);
kern_return_t vm_deallocate(vm_map_t target_task, vm_address_t address, vm_size_t size);
#ifdef __cplusplus
}
#endif
