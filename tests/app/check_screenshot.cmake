# check_screenshot(TOOL PNG WORK_DIR): fails the test unless PNG is a rendered 1600x1000 frame
# (gui_fixture_tool check-png) and screenshot mode left no settings under WORK_DIR/config.
function(check_screenshot tool png work_dir)
  execute_process(COMMAND ${tool} check-png ${png} 1600 1000 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the screenshot ${png} is not a rendered frame")
  endif()
  file(GLOB leftovers ${work_dir}/config/*)
  if(leftovers)
    message(FATAL_ERROR "screenshot mode wrote settings: ${leftovers}")
  endif()
endfunction()
