#include "child_event.h"

#include "watch_shim.h"

void fc_child_event_begin(struct fc_line* l, const char* ev) {
  fc_line_begin(l, ev);
  fc_line_field_i64(l, "ppid", fc_self.parent);
  fc_line_field_hex(l, "of_img", fc_self.parent_img);
  fc_line_field_u64(l, "of_seq", fc_self.parent_seq);
}
