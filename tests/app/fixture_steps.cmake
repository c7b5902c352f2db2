# Steps the app's CMake test scripts share.
#   fresh_work_dir(DIR)                  DIR emptied, holding only an empty config folder (the
#                                        XDG_CONFIG_HOME the app under test is given)
#   run_fixture_tool(TOOL WHAT ARGS...)  gui_fixture_tool run with ARGS; the test stops with
#                                        "writing WHAT failed" when it does not exit 0

function(fresh_work_dir dir)
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir}/config)
endfunction()

function(run_fixture_tool tool what)
  execute_process(COMMAND ${tool} ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "writing ${what} failed (${rc})")
  endif()
endfunction()
