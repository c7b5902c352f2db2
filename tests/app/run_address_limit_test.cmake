# The window under address-space limits (ulimit -v) from too small to enough: each run either
# takes its screenshot (exit 0) or says E_NO_MEMORY and exits 1, never ends by a signal, whichever
# allocation fails first (ours, a job thread's stack, or the OpenGL driver's while it compiles
# shaders). Inputs:
#   XVFB_SESSION, APP, TOOL   xvfb_session.sh, modellens, gui_fixture_tool
#   WORK_DIR              emptied first; holds the fixture, the PNGs and the config folder
include(${CMAKE_CURRENT_LIST_DIR}/fixture_steps.cmake)
fresh_work_dir(${WORK_DIR})
set(fixture ${WORK_DIR}/tiny-fixture.gguf)
run_fixture_tool(${TOOL} "the fixture" write ${fixture})
set(ENV{XDG_CONFIG_HOME} ${WORK_DIR}/config)
set(taken 0)
foreach(limit_mb RANGE 660 800 10)
  math(EXPR limit_kb "${limit_mb} * 1024")
  execute_process(
    COMMAND ${XVFB_SESSION} 800x600x24 /bin/bash -c "ulimit -v ${limit_kb} && exec \"$0\" \"$@\"" ${APP}
            --screenshot ${WORK_DIR}/shot-${limit_mb}.png --frames 2 --size 800x600 ${fixture}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err
    TIMEOUT 120)
  if(rc EQUAL 0)
    math(EXPR taken "${taken} + 1")
  elseif(NOT rc EQUAL 1 OR NOT err MATCHES "E_NO_MEMORY: out of memory while [^\n]*by ulimit -v")
    message(FATAL_ERROR "under ulimit -v ${limit_kb} the window ended with ${rc}, not 0 or 1 with E_NO_MEMORY: ${out} ${err}")
  endif()
endforeach()
message(STATUS "${taken} of 15 limits were enough for a screenshot")
