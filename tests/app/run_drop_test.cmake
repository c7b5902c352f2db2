# Drops files and folders on the real window under Xvfb and checks that they open as documents.
# The app starts in screenshot mode on the GUI fixture and waits for one more document per dropped
# path; xdnd_drop_source drops DROP on the window in one drag. Passes when the drop source saw
# the drop accepted, the app reports every dropped path ready with the first one's tab in front,
# the PNG is a rendered 1600x1000 frame and no settings were written. Inputs:
#   XVFB_SESSION, APP, TOOL, DROP_SOURCE
#              xvfb_session.sh, modellens, gui_fixture_tool, xdnd_drop_source
#   WORK_DIR   emptied first; holds the PNG NAME.png, the config folder, the GUI fixture and the
#              safetensors folder fixture "WORK_DIR/safetensors model", which DROP may name
#   NAME       the PNG's name
#   DROP       absolute, normalized paths to drop, separated by '|'
#   TIMEOUT    optional: seconds the app and the drop source may take (120)
# The app and the drop source must share one X display, so the script runs itself again under
# xvfb_session.sh with STAGE=display, where the two run side by side as one pipeline (the drop
# source writes nothing to stdout, and the app reads nothing from stdin).
string(REPLACE "|" ";" drop "${DROP}")
set(png ${WORK_DIR}/${NAME}.png)
set(fixture ${WORK_DIR}/tiny-fixture.gguf)
if(NOT TIMEOUT)
  set(TIMEOUT 120)
endif()

if(STAGE STREQUAL "display")
  list(LENGTH drop dropped)
  math(EXPR documents "${dropped} + 1")
  execute_process(
    COMMAND ${DROP_SOURCE} --window-name ModelLens --timeout ${TIMEOUT} ${drop}
    COMMAND ${APP} --screenshot ${png} --frames 4 --size 1600x1000
            --wait-documents ${documents} --timeout ${TIMEOUT} ${fixture}
    RESULTS_VARIABLE results
    OUTPUT_VARIABLE report
    ERROR_VARIABLE errors)
  list(GET results 0 drop_rc)
  list(GET results 1 app_rc)
  if(NOT drop_rc EQUAL 0)
    message(FATAL_ERROR "the drop failed (${drop_rc}):\n${errors}${report}")
  endif()
  if(NOT app_rc EQUAL 0)
    message(FATAL_ERROR "modellens --screenshot failed (${app_rc}):\n${errors}${report}")
  endif()
  list(GET drop 0 first)
  foreach(path IN LISTS drop)
    set(line "document ready ${path}\n")
    if(path STREQUAL first)
      set(line "document ready front ${path}\n")
    endif()
    string(FIND "${report}" "${line}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "no line '${line}' in the app's report:\n${report}${errors}")
    endif()
  endforeach()
  message(STATUS "${errors}${report}")
  return()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/fixture_steps.cmake)
fresh_work_dir(${WORK_DIR})
run_fixture_tool(${TOOL} "the GUI fixture" write ${fixture})
run_fixture_tool(${TOOL} "the safetensors folder fixture" write-safetensors-folder "${WORK_DIR}/safetensors model")

set(ENV{XDG_CONFIG_HOME} ${WORK_DIR}/config)
math(EXPR limit "${TIMEOUT} + 60")
execute_process(
  COMMAND ${XVFB_SESSION} 1600x1000x24
          ${CMAKE_COMMAND} -DSTAGE=display -DAPP=${APP} -DDROP_SOURCE=${DROP_SOURCE} -DWORK_DIR=${WORK_DIR}
          -DNAME=${NAME} "-DDROP=${DROP}" -DTIMEOUT=${TIMEOUT} -P ${CMAKE_CURRENT_LIST_FILE}
  RESULT_VARIABLE rc
  TIMEOUT ${limit})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dropping ${DROP} on the window failed (${rc})")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/check_screenshot.cmake)
check_screenshot(${TOOL} ${png} ${WORK_DIR})
