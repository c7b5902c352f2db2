# check_screenshot(TOOL PNG WORK_DIR [WIDTH HEIGHT]): fails the test unless PNG is a rendered frame
# of WIDTHxHEIGHT (1600x1000 when not given; gui_fixture_tool check-png) and screenshot mode left
# no settings under WORK_DIR/config.
function(check_screenshot tool png work_dir)
  set(width 1600)
  set(height 1000)
  if(ARGC GREATER 4)
    set(width ${ARGV3})
    set(height ${ARGV4})
  endif()
  execute_process(COMMAND ${tool} check-png ${png} ${width} ${height} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the screenshot ${png} is not a rendered frame")
  endif()
  file(GLOB leftovers ${work_dir}/config/*)
  if(leftovers)
    message(FATAL_ERROR "screenshot mode wrote settings: ${leftovers}")
  endif()
endfunction()
