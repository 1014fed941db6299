// The program each layer is linked whole into, against only the layers below it (CMakeLists.txt,
// tracedoc_layer): it never runs; that it links is the check that the layer calls nothing above it.
int main() { return 0; }
