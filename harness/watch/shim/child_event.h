/* Events a fork child writes about itself before it execs (exec, exec_failed, end): each names
 * the fork that made it, by the parent's image and the fork's sequence number. */
#ifndef FC_CHILD_EVENT_H
#define FC_CHILD_EVENT_H

#include "event_line.h"

/* {"ev":EV,"pid":..,"t":..,"ppid":..,"of_img":..,"of_seq":.. */
void fc_child_event_begin(struct fc_line* l, const char* ev);

#endif
