/* The shared library's code comes whole from gdrcoll_static; CMake needs one
 * source file of its own to define the target. */
int gdr_export_anchor_unused;
