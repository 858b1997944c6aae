# Installing and packaging: `cmake --install BUILD --prefix PREFIX` puts `reduce` (cli/CMakeLists.txt),
# its docs and its examples under PREFIX; `cpack -G DEB` in a build folder (scripts/package-deb.sh OUT)
# makes the Debian package. Nothing installed reads the source tree: the ONNX Runtime worker and its
# installer are embedded in the binary, and engine releases go to the user's cache folder.
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The source tree's layout under the doc folder, so that the docs' relative links resolve there too
# (tests/install/install_test.sh follows every one).
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md" PATTERN "*.mjs")
install(FILES bench/RESULTS.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/bench)
install(FILES corpus/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/corpus)
# Failing models to try it on: the generator's committed examples and real engines' failures.
install(DIRECTORY corpus/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/reduce/examples)
install(DIRECTORY corpus/engines/ DESTINATION ${CMAKE_INSTALL_DATADIR}/reduce/examples/engines)
# bash completion, read from reduce's own help at completion time (scripts/completion/reduce.bash).
install(FILES scripts/completion/reduce.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME reduce)

# The Debian package. Its Depends come from the binary's shared libraries (dpkg-shlibdeps); the
# programs reduce runs when present are Recommends (Graphviz and gnuplot draw the pictures, Node.js
# and npm run and install ONNX Runtime) or Suggests (what the reproduction scripts and MPI use).
file(STRINGS ${PROJECT_SOURCE_DIR}/core/include/core/version.h reduce_version_line REGEX "kReduceVersion = ")
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" REDUCE_VERSION "${reduce_version_line}")
set(CPACK_PACKAGE_NAME reduce)
set(CPACK_PACKAGE_VERSION ${REDUCE_VERSION})
set(CPACK_PACKAGE_CONTACT "reduce maintainers <reduce-maintainers@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "shrinks an ONNX model on which an inference engine fails to the smallest model that still fails")
set(CPACK_PACKAGE_DESCRIPTION
    "reduce takes an ONNX model on which an engine (TensorRT, ONNX Runtime, OpenCV DNN, your own command) gives a wrong answer, crashes or refuses to build, and shrinks it to the smallest model that still fails the same way, with a bundle ready to file.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bash")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "graphviz, gnuplot-nox, nodejs, npm")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-numpy, python3-opencv, openmpi-bin")
set(CPACK_GENERATOR DEB)
include(CPack)
