#pragma once
// What a stream is connected to: whether it is a terminal, whether it wants colours, how wide it is. Used by
// `kairo chat` and by every command's progress bars.

namespace kairo::tools {

bool is_terminal(int fd);
// Colours only on a terminal that can show them, and never when NO_COLOR is set to anything (no-color.org).
bool colour_wanted(int fd);
// Both ends are a terminal that understands cursor movement (TERM is not "dumb"): what the line editor needs.
bool can_edit_lines(int in_fd, int out_fd);
int terminal_columns(int fd);  // 80 when the terminal does not say

}  // namespace kairo::tools
