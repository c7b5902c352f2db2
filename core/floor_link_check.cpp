// A program that links one floor of core whole, with only the floors below it
// (core/CMakeLists.txt): it does nothing, it only has to link.
int main() { return 0; }
